// A dispatcher process for the kill test: fan-out and dispatcher against DATABASE_URL until killed.
// Run with `node --conditions=@points/source --import tsx test/webhooks/dispatcher-process.ts`.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Redacted } from "effect"
import {
  databaseAt,
  InlineProjectionLive,
  LogListener,
  LogNotifier,
  webhookDeliveryLayer,
} from "../../src/index.js"

const url = process.env.DATABASE_URL
if (url === undefined) throw new Error("DATABASE_URL is required")

const delivery = webhookDeliveryLayer({
  fanOut: { pollInterval: "100 millis" },
  dispatcher: {
    retrySchedule: [0, 1, 1, 1, 1],
    allowPrivateTargets: true,
    pollInterval: "200 millis",
    concurrency: Number(process.env.DISPATCH_CONCURRENCY ?? "4"),
    sendTimeout: "2 seconds",
    lease: "7 seconds",
    instanceId: process.env.DISPATCHER_ID ?? "child",
  },
})

const program = Effect.zipRight(
  Effect.sync(() => process.stdout.write("ready\n")),
  Effect.never,
)

const database = databaseAt(Redacted.make(url), { poolSize: 8 })
NodeRuntime.runMain(
  program.pipe(
    Effect.provide(
      delivery.pipe(
        Layer.provideMerge(Layer.mergeAll(InlineProjectionLive, LogNotifier.layer, LogListener.layer)),
        Layer.provideMerge(database),
      ),
    ),
  ),
)

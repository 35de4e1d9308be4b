import type { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer } from "effect"
import type { LogListener } from "../consumers/log-listener.js"
import { runConsumer } from "../consumers/run-consumer.js"
import type { InlineProjection } from "../event-store/inline-projection.js"
import type { LogNotifier } from "../event-store/log-notifier.js"
import { ORDER_FULFILMENT_CONSUMER, recordFulfilmentJobs } from "./record-fulfilment-jobs.js"
import { type FulfilmentWorkerOptions, runFulfilmentWorker } from "./run-fulfilment-worker.js"

/**
 * The default FULFILMENT_DELAY_MS: 5 seconds, long enough that a partner polling an order or reading its
 * webhooks sees `processing` as a state of its own, short enough for a demo or an integration test to
 * watch orders complete.
 */
export const DEFAULT_FULFILMENT_DELAY = Duration.millis(5000)

/** How the sandbox fulfilment runs in one process. */
export interface OrderFulfilmentOptions extends FulfilmentWorkerOptions {
  /** Events per batch of the job-recording consumer (default 100). */
  readonly batchSize?: number
}

/**
 * Sandbox order fulfilment, running until interrupted: the `order-fulfilment` consumer of the global log
 * (one active instance across processes) records a job per placed order, and this process's workers move
 * each order pending -> processing after `delay` (the window in which a partner can still cancel it), then
 * -> completed (or failed and refunded) `delay` later. Run it in as many processes as
 * wanted against one database.
 */
export const orderFulfilment = (
  options: OrderFulfilmentOptions,
): Effect.Effect<never, never, SqlClient.SqlClient | LogListener | LogNotifier | InlineProjection> =>
  Effect.all(
    [
      runConsumer({
        name: ORDER_FULFILMENT_CONSUMER,
        handle: recordFulfilmentJobs(options.delay),
        batchSize: options.batchSize ?? 100,
        pollInterval: options.pollInterval,
      }),
      runFulfilmentWorker(options),
    ],
    { concurrency: "unbounded", discard: true },
  ).pipe(Effect.zipRight(Effect.never))

/** `orderFulfilment` forked for as long as the layer lives. */
export const OrderFulfilmentLive = (options: OrderFulfilmentOptions) =>
  Layer.scopedDiscard(Effect.forkScoped(orderFulfilment(options)))

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { LogListener, LogNotifier, runConsumer, waitUntilCaughtUp } from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"
import { appendEvents, createHandledTable, recordHandled, waitForStat } from "./consumer-fixtures.js"

// Checks every 100 ms, so that a dead LISTEN connection is found within a test's patience.
const database = Layer.provideMerge(
  Layer.mergeAll(
    LogNotifier.layer,
    LogListener.layerWith({ checkEvery: "100 millis", confirmWithin: "500 millis" }),
  ),
  testDatabase({ poolSize: 20 }),
)

/** The backends whose last statement was a LISTEN: the listener's connection. */
const listenBackends = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ pid: number }>`
    SELECT pid FROM pg_stat_activity
    WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`,
).pipe(Effect.map((rows) => rows.map((row) => row.pid)))

layer(database, { excludeTestServices: true })("LogListener", (it) => {
  it.scoped("replaces a LISTEN connection that died, and the consumers hear NOTIFY again", () =>
    Effect.gen(function* () {
      yield* createHandledTable
      const sql = yield* SqlClient.SqlClient
      const notifier = yield* LogNotifier
      const name = `deaf-${newId()}`
      yield* Effect.forkScoped(
        runConsumer({ name, handle: recordHandled(name), batchSize: 1000, pollInterval: "30 seconds" }),
      )
      yield* waitForStat(name, "reads", 1)
      const [listening] = yield* listenBackends
      if (listening === undefined) return expect.unreachable()

      yield* sql`SELECT pg_terminate_backend(${listening})`
      // Appended while the listener may be deaf: its NOTIFY can be lost, and the consumer polls only every 30 s.
      const appended = yield* appendEvents(newId())
      yield* notifier.committed
      const event = appended.recorded[0]
      if (event === undefined) return expect.unreachable()
      yield* waitUntilCaughtUp(name, event, "5 seconds")
      const replacement = yield* listenBackends.pipe(
        Effect.repeat({ until: (pids) => pids.length > 0, schedule: Schedule.spaced("10 millis") }),
        Effect.zipRight(listenBackends),
      )
      expect(replacement).not.toContain(listening)
      expect(replacement).toHaveLength(1)
    }),
  )
})

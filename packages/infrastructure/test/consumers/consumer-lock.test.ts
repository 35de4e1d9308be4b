import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, ExecutionStrategy, Exit, Layer, Logger, Scope } from "effect"
import { holdConsumerLock } from "../../src/consumers/consumer-lock.js"
import {
  LogListener,
  LogNotifier,
  type RecordedEvent,
  runConsumer,
  waitUntilCaughtUp,
} from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"
import {
  appendEvents,
  createHandledTable,
  handledBy,
  recordHandled,
  waitForStat,
} from "./consumer-fixtures.js"

const database = Layer.provideMerge(
  Layer.mergeAll(LogNotifier.layer, LogListener.layer),
  testDatabase({ poolSize: 30 }),
)

/** The backends holding a consumer's advisory lock (a bigint key shows as classid:objid in pg_locks). */
const lockHolders = (name: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ pid: number }>`
      SELECT pid FROM pg_locks
      WHERE locktype = 'advisory' AND granted
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('consumer:' || ${name}, 0)`,
  ).pipe(Effect.map((rows) => rows.map((row) => row.pid)))

/** Starts a runner of `name` in a scope of its own (closed with the test's), recording as `runner`. */
const startRunner = (name: string, runner: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    yield* Effect.forkIn(
      runConsumer({
        name,
        handle: recordHandled(name, runner),
        batchSize: 100,
        pollInterval: "100 millis",
        lockRetryInterval: "20 millis",
        retryBackoff: { initial: "10 millis", max: "100 millis" },
      }),
      scope,
    )
    return scope
  })

const lastOf = (events: ReadonlyArray<RecordedEvent>) => {
  const last = events.at(-1)
  if (last === undefined) throw new Error("nothing was appended")
  return last
}

const countBy = (ids: ReadonlyArray<string>) => {
  const counts = new Map<string, number>()
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1)
  return counts
}

layer(database, { excludeTestServices: true })("consumer lock", (it) => {
  it.scoped("of two runners with one name only one works; the other takes over from the checkpoint", () =>
    Effect.gen(function* () {
      yield* createHandledTable
      const name = `pair-${newId()}`
      const scopeA = yield* startRunner(name, "A")
      const first = yield* appendEvents(newId(), 3)
      yield* waitUntilCaughtUp(name, lastOf(first.recorded), "10 seconds")

      yield* startRunner(name, "B")
      yield* waitForStat(name, "lockRefusals", 2)
      const second = yield* appendEvents(newId(), 3)
      yield* waitUntilCaughtUp(name, lastOf(second.recorded), "10 seconds")
      const whileBothRun = yield* handledBy(name)
      expect(new Set(whileBothRun.map((row) => row.runner))).toEqual(new Set(["A"]))
      expect(yield* lockHolders(name)).toHaveLength(1)

      yield* Scope.close(scopeA, Exit.void)
      const third = yield* appendEvents(newId(), 3)
      yield* waitUntilCaughtUp(name, lastOf(third.recorded), "10 seconds")
      const all = yield* handledBy(name)
      expect(all.slice(0, whileBothRun.length)).toEqual(whileBothRun)
      const takenOver = all.slice(whileBothRun.length)
      expect(takenOver.map((row) => row.event_id)).toEqual(third.recorded.map((event) => event.eventId))
      expect(new Set(takenOver.map((row) => row.runner))).toEqual(new Set(["B"]))
      expect([...countBy(all.map((row) => row.event_id)).values()].every((n) => n === 1)).toBe(true)
      expect(yield* lockHolders(name)).toHaveLength(1)
    }),
  )

  it.scoped(
    "when the lock holder's connection dies, the lock frees and work goes on without duplicates",
    () =>
      Effect.gen(function* () {
        yield* createHandledTable
        const sql = yield* SqlClient.SqlClient
        const name = `fault-${newId()}`
        yield* startRunner(name, "A")
        const first = yield* appendEvents(newId(), 2)
        yield* waitUntilCaughtUp(name, lastOf(first.recorded), "10 seconds")
        yield* startRunner(name, "B")
        yield* waitForStat(name, "lockRefusals", 2)
        const [holder] = yield* lockHolders(name)
        if (holder === undefined) return expect.unreachable()

        yield* sql`SELECT pg_terminate_backend(${holder})`
        const second = yield* appendEvents(newId(), 2)
        yield* waitUntilCaughtUp(name, lastOf(second.recorded), "10 seconds")
        const holders = yield* lockHolders(name)
        expect(holders).toHaveLength(1)
        expect(holders).not.toContain(holder)
        const all = yield* handledBy(name)
        const counts = countBy(all.map((row) => row.event_id))
        for (const event of [...first.recorded, ...second.recorded]) {
          expect(counts.get(event.eventId)).toBe(1)
        }
        expect([...counts.values()].every((n) => n === 1)).toBe(true)
      }),
  )

  it.scoped("a NOTIFY from LogNotifier wakes an idle consumer long before its 30 s poll", () =>
    Effect.gen(function* () {
      yield* createHandledTable
      const notifier = yield* LogNotifier
      const name = `wake-${newId()}`
      yield* Effect.forkScoped(
        runConsumer({ name, handle: recordHandled(name), batchSize: 1000, pollInterval: "30 seconds" }),
      )
      // The first read comes after the consumer heard its own NOTIFY: it is listening, and now idle.
      yield* waitForStat(name, "reads", 1)
      const started = yield* Clock.currentTimeMillis
      const appended = yield* appendEvents(newId())
      yield* notifier.committed
      yield* waitUntilCaughtUp(name, lastOf(appended.recorded), "10 seconds")
      const latency = (yield* Clock.currentTimeMillis) - started
      // Bounded far below the 30 s poll, with room for a slow machine.
      expect(latency).toBeLessThan(10_000)
      const handled = yield* handledBy(name)
      expect(handled.map((row) => row.event_id)).toContain(lastOf(appended.recorded).eventId)
    }),
  )

  it.scoped("stopping one consumer leaves the others listening", () =>
    Effect.gen(function* () {
      yield* createHandledTable
      const notifier = yield* LogNotifier
      const stopped = `stopped-${newId()}`
      const running = `running-${newId()}`
      const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
      yield* Effect.forkIn(
        runConsumer({
          name: stopped,
          handle: recordHandled(stopped),
          batchSize: 1000,
          pollInterval: "30 seconds",
        }),
        scope,
      )
      yield* Effect.forkScoped(
        runConsumer({
          name: running,
          handle: recordHandled(running),
          batchSize: 1000,
          pollInterval: "30 seconds",
        }),
      )
      yield* waitForStat(stopped, "reads", 1)
      yield* waitForStat(running, "reads", 1)
      yield* Scope.close(scope, Exit.void)
      const appended = yield* appendEvents(newId())
      yield* notifier.committed
      yield* waitUntilCaughtUp(running, lastOf(appended.recorded), "10 seconds")
    }),
  )

  it.scoped("several consumers side by side each handle every append promptly (30 s polls)", () =>
    Effect.gen(function* () {
      yield* createHandledTable
      const notifier = yield* LogNotifier
      // Each one's batch transaction hides the others' appends for a moment; none may then sleep 30 s.
      const names = Array.from({ length: 3 }, (_, n) => `side-${n}-${newId()}`)
      for (const name of names) {
        yield* Effect.forkScoped(
          runConsumer({ name, handle: recordHandled(name), batchSize: 1000, pollInterval: "30 seconds" }),
        )
        yield* waitForStat(name, "reads", 1)
      }
      for (let n = 0; n < 10; n++) {
        const appended = yield* appendEvents(newId())
        yield* notifier.committed
        for (const name of names) {
          yield* waitUntilCaughtUp(name, lastOf(appended.recorded), "10 seconds")
        }
      }
    }),
  )
})

// A pool of its own: the connection this test ends could otherwise be handed to another test before the pool
// learns that it is gone.
layer(testDatabase({ poolSize: 2 }), { excludeTestServices: true })(
  "consumer lock, its session ended",
  (it) => {
    it.scoped(
      "a lock whose session ended is said to have ended with it, not reported as a failed unlock",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const name = `ended-${newId()}`
          const logged: Array<{ readonly level: string; readonly message: unknown }> = []
          const logger = Logger.make(({ logLevel, message }) => {
            logged.push({ level: logLevel.label, message: Array.isArray(message) ? message[0] : message })
          })
          const scope = yield* Scope.make()
          yield* holdConsumerLock(name, "20 millis").pipe(
            Scope.extend(scope),
            Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
          )
          const [holder] = yield* lockHolders(name)
          if (holder === undefined) return expect.unreachable()
          // As when the server stops first (Ctrl-C signals the embedded server too): the session is gone.
          yield* sql`SELECT pg_terminate_backend(${holder})`
          yield* Scope.close(scope, Exit.void)
          expect(logged.filter((line) => line.level !== "INFO")).toEqual([])
          expect(logged.map((line) => String(line.message))).toEqual([
            expect.stringContaining(`consumer ${name}: its lock ended with its session (`),
          ])
        }),
    )
  },
)

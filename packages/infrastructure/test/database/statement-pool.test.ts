import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import { type Duration, Effect } from "effect"
import { statementPool } from "../../src/database/statement-pool.js"
import { eventually, testDatabase } from "../../src/testing/index.js"

const poolAt = (
  url: NonNullable<PgClient.PgClient["config"]["url"]>,
  idleInTransaction?: Duration.DurationInput,
) =>
  statementPool({
    url,
    maxConnections: 1,
    applicationName: "statement-pool-test",
    connectTimeout: "10 seconds",
    ...(idleInTransaction === undefined ? {} : { idleInTransaction }),
  })

layer(testDatabase(), { timeout: "60 seconds", excludeTestServices: true })("The statement pool", (it) => {
  it.scoped("has PostgreSQL end a transaction left idle, so a hung process cannot hold its locks", () =>
    Effect.gen(function* () {
      const url = (yield* PgClient.PgClient).config.url
      if (url === undefined) return expect.unreachable()
      const pool = yield* poolAt(url)
      const setting = yield* Effect.promise(() => pool.query("SHOW idle_in_transaction_session_timeout"))
      expect(setting.rows[0]?.idle_in_transaction_session_timeout).toBe("1min")

      const short = yield* poolAt(url, "200 millis")
      const client = yield* Effect.acquireRelease(
        Effect.promise(() => short.connect()),
        (connection) => Effect.sync(() => connection.release(true)),
      )
      client.on("error", () => undefined)
      yield* Effect.promise(() => client.query("BEGIN"))
      // Idle inside the transaction past the limit: the session is gone, and the transaction with it.
      yield* Effect.sleep("1 second")
      const after = yield* Effect.promise(() =>
        client.query("SELECT 1").then(
          () => "ran",
          () => "refused",
        ),
      )
      expect(after).toBe("refused")
    }),
  )

  it.scoped("has PostgreSQL end a waiting session whose client is gone, freeing what it holds", () =>
    Effect.gen(function* () {
      const url = (yield* PgClient.PgClient).config.url
      if (url === undefined) return expect.unreachable()
      const sql = yield* PgClient.PgClient
      const pool = yield* poolAt(url)
      const holder = yield* poolAt(url)
      const lockKey = Math.floor(Math.random() * 1_000_000)
      // Someone else holds the lock for longer than the test runs.
      const holding = yield* Effect.acquireRelease(
        Effect.promise(() => holder.connect()),
        (connection) => Effect.sync(() => connection.release(true)),
      )
      yield* Effect.promise(() => holding.query("SELECT pg_advisory_lock($1)", [lockKey]))
      // A process's session waits for it, holding a lock of its own (as a claim holds its key) meanwhile.
      const waiter = yield* Effect.promise(() => pool.connect())
      waiter.on("error", () => undefined)
      const { rows } = yield* Effect.promise(() => waiter.query("SELECT pg_backend_pid() AS pid"))
      const pid = Number(rows[0]?.pid)
      yield* Effect.promise(() => waiter.query("BEGIN"))
      yield* Effect.promise(() => waiter.query("SELECT pg_advisory_xact_lock($1)", [lockKey + 1]))
      waiter.query("SELECT pg_advisory_xact_lock($1)", [lockKey]).catch(() => undefined)
      const waiting = sql<{ waiting: boolean }>`
        SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE pid = ${pid}`
      yield* eventually(waiting, (found) => found[0]?.waiting === true)
      // The process dies: its socket closes, and nothing is sent on it any more.
      ;(waiter as unknown as { connection: { stream: { destroy: () => void } } }).connection.stream.destroy()
      // Its session ends while the lock it waits for is still held, and what it held is free again.
      yield* eventually(waiting, (found) => found.length === 0)
      const free = yield* sql<{ taken: boolean }>`SELECT pg_try_advisory_lock(${lockKey + 1}) AS taken`
      expect(free[0]?.taken).toBe(true)
      yield* sql`SELECT pg_advisory_unlock(${lockKey + 1})`
    }),
  )
})

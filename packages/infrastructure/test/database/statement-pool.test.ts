import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import { type Duration, Effect } from "effect"
import { statementPool } from "../../src/database/statement-pool.js"
import { testDatabase } from "../../src/testing/index.js"

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
})

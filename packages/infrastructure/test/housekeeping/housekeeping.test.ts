import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { consumeRateLimit, reapIdleRateLimits, sweepOnce } from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"

// One request per 100 s: no bucket refills on its own while a test runs, however slow the machine, so only
// letTimePass makes a key idle.
const policy = { ratePerSecond: 0.01, burst: 5 }

const rateLimitKeys = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ key: string }>`SELECT key FROM rate_limits ORDER BY key`, (rows) =>
    rows.map((row) => row.key),
  ),
)

/** Moves a key's state back by `seconds`: exactly what that much time passing does to it. */
const letTimePass = (key: string, seconds: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE rate_limits SET tat = tat - ${seconds} * interval '1 second' WHERE key = ${key}`,
  )

// Its own database: a sweep deletes every expired row, so no other test's rows may be in the tables.
layer(testDatabase())("Housekeeping", (it) => {
  it.effect("reaps the rows of idle rate-limit keys only, and a reaped key decides as a fresh one", () =>
    Effect.gen(function* () {
      const idle = `idle-${newId()}`
      const busy = `busy-${newId()}`
      for (let n = 0; n < 5; n++) yield* consumeRateLimit(idle, policy)
      for (let n = 0; n < 5; n++) yield* consumeRateLimit(busy, policy)
      // The idle key's bucket refilled long ago; the busy one's has not.
      yield* letTimePass(idle, 1000)
      expect(yield* reapIdleRateLimits({ batchSize: 1 })).toBe(1)
      expect(yield* rateLimitKeys).toEqual([busy])
      // The busy key keeps its state: its burst is spent.
      expect((yield* consumeRateLimit(busy, policy)).allowed).toBe(false)
      const fresh = yield* consumeRateLimit(idle, policy)
      expect(fresh).toMatchObject({ allowed: true, remaining: 4 })
    }),
  )

  it.effect("sweeps expired idempotency keys, tokens and idle rate-limit rows in one pass", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const partner = newId()
      // Two completed keys, one whose lifetime ended a day ago.
      yield* sql`
        INSERT INTO idempotency_keys (partner_id, key, state, method, path, body_sha256, first_received_at,
                                      expires_at, claim_token, response_status, response_headers, response_body,
                                      updated_at)
        VALUES (${partner}, 'old', 'Completed', 'POST', '/api/x', ${"0".repeat(64)}, now() - interval '2 days',
                now() - interval '1 day', ${newId()}, 201, '{}', '{}', now() - interval '2 days'),
               (${partner}, 'live', 'Completed', 'POST', '/api/x', ${"0".repeat(64)}, now(),
                now() + interval '1 day', ${newId()}, 201, '{}', '{}', now())`
      const key = `idle-${newId()}`
      yield* consumeRateLimit(key, policy)
      yield* letTimePass(key, 1000)
      const swept = yield* sweepOnce
      expect(swept.idempotencyKeys).toBe(1)
      expect(swept.rateLimits).toBe(1)
      const keys = yield* sql<{ key: string }>`SELECT key FROM idempotency_keys WHERE partner_id = ${partner}`
      expect(keys.map((row) => row.key)).toEqual(["live"])
      expect(yield* sweepOnce).toEqual({ idempotencyKeys: 0, accessTokens: 0, rateLimits: 0 })
    }),
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { claimKey, reapAllExpiredKeys, reapExpiredKeys } from "../../src/index.js"
import {
  age,
  claimOf,
  executeRequest,
  idempotencyTestDatabase,
  newKey,
  newPartner,
  response,
} from "./key-fixtures.js"

const DAY = 86_400

const remainingKeys = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ key: string }>`SELECT key FROM idempotency_keys ORDER BY key`, (rows) =>
    rows.map((row) => row.key),
  ),
)

/** Claims a key, then finishes it as told, then lets `seconds` pass for it. */
const keyIn = (label: string, end: "claimed" | "completed" | "released", seconds: number) =>
  Effect.gen(function* () {
    const partnerId = newPartner()
    const key = newKey(label)
    const outcome = yield* claimKey(claimOf(partnerId, key, { leaseSeconds: 60 }))
    if (outcome._tag !== "Execute") return yield* Effect.dieMessage("expected Execute")
    const claim = { partnerId, key, claimToken: outcome.claimToken }
    if (end === "completed") yield* executeRequest(claim, label)
    if (end === "released") yield* executeRequest(claim, label, response(500))
    yield* age(claim, seconds)
    return { partnerId, key }
  })

const keyName = (k: { readonly key: string }) => k.key

// Its own database: the reaper deletes every expired key, so no other test's keys may be in the table.
layer(idempotencyTestDatabase())("reapExpiredKeys", (it) => {
  it.effect("deletes only keys whose lifetime and lease ended, in bounded batches", () =>
    Effect.gen(function* () {
      const expired = yield* Effect.all([
        keyIn("a-done", "completed", DAY + 1),
        keyIn("b-done", "completed", DAY + 1),
        keyIn("c-done", "completed", DAY + 1),
        keyIn("d-done", "completed", DAY + 1),
        keyIn("e-released", "released", DAY + 1),
        // Its process died long ago: lifetime and lease are both over.
        keyIn("f-abandoned", "claimed", DAY + 61),
      ])
      const kept = yield* Effect.all([
        keyIn("g-live-done", "completed", DAY - 60),
        keyIn("h-live-claim", "claimed", 0),
        keyIn("i-running-past-lifetime", "claimed", 0),
      ])
      // Taken over in the lifetime's last seconds, so its lifetime ended while its lease has not: it may be
      // executing, and its key lives until it finishes.
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        UPDATE idempotency_keys SET first_received_at = now() - interval '25 hours', expires_at = now() - interval '1 second'
        WHERE key = ${kept[2].key}`
      expect(yield* reapExpiredKeys({ batchSize: 2 })).toBe(2)
      // Bounded: two batches of one, although more are due.
      expect(yield* reapAllExpiredKeys({ batchSize: 1, maxBatches: 2 })).toBe(2)
      // Until a batch comes back short.
      expect(yield* reapAllExpiredKeys({ batchSize: 1, maxBatches: 100 })).toBe(2)
      expect(yield* reapAllExpiredKeys()).toBe(0)
      expect(yield* remainingKeys).toEqual(kept.map(keyName).sort())
      expect(expired).toHaveLength(6)
      yield* sql`DELETE FROM idempotency_keys`
    }),
  )

  it.effect("skips a key a claim holds right now instead of waiting for it, and reaps it later", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { partnerId, key } = yield* keyIn("locked", "completed", DAY + 1)
      const locked = yield* Deferred.make<void>()
      const unlock = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`SELECT 1 FROM idempotency_keys WHERE key = ${key} FOR UPDATE`
            yield* Deferred.succeed(locked, undefined)
            yield* Deferred.await(unlock)
          }),
        ),
      )
      yield* Deferred.await(locked)
      expect(yield* reapAllExpiredKeys({ batchSize: 10 })).toBe(0)
      yield* Deferred.succeed(unlock, undefined)
      yield* Fiber.join(holder)
      expect(yield* reapAllExpiredKeys({ batchSize: 10 })).toBe(1)
      // A reaped key is unknown again: any request with it executes.
      expect(yield* remainingKeys).toEqual([])
      const anew = yield* claimKey(claimOf(partnerId, key))
      expect(anew).toMatchObject({ _tag: "Execute", takeover: false })
    }),
  )
})

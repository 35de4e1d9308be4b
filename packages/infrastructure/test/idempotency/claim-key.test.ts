import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { IdempotencyKeyInProgress, IdempotencyKeyReused } from "@points/domain"
import { Cause, Deferred, Effect, Either, Exit, Fiber } from "effect"
import { ClaimOutcome, claimKey, recordResponse } from "../../src/index.js"
import {
  age,
  claimOf,
  effectsOf,
  executeRequest,
  fingerprint,
  idempotencyTestDatabase,
  insertEffect,
  newKey,
  newPartner,
  response,
  rowOf,
} from "./key-fixtures.js"

const tokenOf = (outcome: ClaimOutcome) => {
  if (outcome._tag !== "Execute") throw new Error(`expected Execute, got ${outcome._tag}`)
  return outcome.claimToken
}

// 25 connections, so that the 20 concurrent claims below really race on the database.
layer(idempotencyTestDatabase({ poolSize: 25 }))("claimKey", (it) => {
  it.effect("executes a new key once, then replays the recorded response to every retry", () =>
    Effect.gen(function* () {
      const partnerId = newPartner()
      const key = newKey()
      const first = yield* claimKey(claimOf(partnerId, key))
      expect(first).toMatchObject({ _tag: "Execute", takeover: false })
      const claimToken = tokenOf(first)
      expect(yield* executeRequest({ partnerId, key, claimToken }, "order placed")).toBe("Completed")
      for (let retry = 0; retry < 3; retry++) {
        const again = yield* claimKey(claimOf(partnerId, key))
        expect(again).toEqual(ClaimOutcome.Replay({ response: response(201, { note: "order placed" }) }))
      }
      expect(yield* effectsOf({ partnerId, key })).toEqual(["order placed"])
      expect(yield* rowOf({ partnerId, key })).toMatchObject({ state: "Completed", claim_token: claimToken })
    }),
  )

  it.effect(
    "refuses a key used with another request (IK1001), naming what differs, and changes nothing",
    () =>
      Effect.gen(function* () {
        const partnerId = newPartner()
        const key = newKey()
        const claimToken = tokenOf(yield* claimKey(claimOf(partnerId, key)))
        // Refused while the first request still runs, not only once it recorded.
        const whileRunning = yield* Effect.flip(
          claimKey(claimOf(partnerId, key, { fingerprint: fingerprint({ body: "{}" }) })),
        )
        expect(whileRunning).toEqual(new IdempotencyKeyReused({ differs: ["body"] }))
        yield* executeRequest({ partnerId, key, claimToken }, "first")
        const before = yield* rowOf({ partnerId, key })
        const cases = [
          [{ path: "/api/orders/other/cancel" }, ["path"]],
          [{ body: '{"items":[]}' }, ["body"]],
          [{ method: "PUT", body: "{}" }, ["method", "body"]],
        ] as const
        for (const [change, differs] of cases) {
          const refused = yield* Effect.flip(
            claimKey(claimOf(partnerId, key, { fingerprint: fingerprint(change) })),
          )
          expect(refused).toBeInstanceOf(IdempotencyKeyReused)
          expect(refused).toMatchObject({ code: "IK1001", status: 422, differs })
          for (const part of differs) expect(refused.message).toContain(part)
        }
        expect(yield* rowOf({ partnerId, key })).toEqual(before)
        expect(yield* effectsOf({ partnerId, key })).toEqual(["first"])
      }),
  )

  it.effect("answers IK1002 at once while the key's request executes", () =>
    Effect.gen(function* () {
      const partnerId = newPartner()
      const key = newKey()
      const claimToken = tokenOf(yield* claimKey(claimOf(partnerId, key)))
      const second = yield* Effect.flip(claimKey(claimOf(partnerId, key)))
      expect(second).toBeInstanceOf(IdempotencyKeyInProgress)
      expect(second).toMatchObject({ code: "IK1002", status: 409 })
      // The refused claim left the running claim as it was.
      expect(yield* rowOf({ partnerId, key })).toMatchObject({ state: "Claimed", claim_token: claimToken })
    }),
  )

  it.effect("of 20 concurrent claims of one key exactly one executes, and its effect happens once", () =>
    Effect.gen(function* () {
      const partnerId = newPartner()
      const key = newKey()
      const start = yield* Deferred.make<void>()
      const request = (n: number) =>
        Effect.gen(function* () {
          yield* Deferred.await(start)
          const outcome = yield* claimKey(claimOf(partnerId, key))
          if (outcome._tag === "Replay") return "replayed" as const
          yield* executeRequest({ partnerId, key, claimToken: outcome.claimToken }, `request ${n}`)
          return "executed" as const
        }).pipe(Effect.catchTag("IdempotencyKeyInProgress", () => Effect.succeed("in progress" as const)))
      const fibers = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, n) => n),
        (n) => Effect.fork(request(n)),
      )
      yield* Deferred.succeed(start, undefined)
      const outcomes = yield* Effect.forEach(fibers, Fiber.join)
      expect(outcomes.filter((o) => o === "executed")).toHaveLength(1)
      expect(outcomes.filter((o) => o === "in progress" || o === "replayed")).toHaveLength(19)
      expect(yield* effectsOf({ partnerId, key })).toHaveLength(1)
      const retry = yield* claimKey(claimOf(partnerId, key))
      expect(retry._tag).toBe("Replay")
    }),
  )

  it.effect("answers IK1002 at once while another claim of a key not yet stored is in flight", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const partnerId = newPartner()
      const key = newKey()
      const locked = yield* Deferred.make<void>()
      const done = yield* Deferred.make<void>()
      // Stands for a concurrent claim between its try-lock and its commit (white box: the lock's name is
      // claimKey's). Without the lock both would find no row, and both would execute.
      const inFlight = yield* Effect.fork(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`idempotency:${partnerId}:${key}`}, 0))`
            yield* Deferred.succeed(locked, undefined)
            yield* Deferred.await(done)
          }),
        ),
      )
      yield* Deferred.await(locked)
      expect(yield* Effect.flip(claimKey(claimOf(partnerId, key)))).toBeInstanceOf(IdempotencyKeyInProgress)
      expect(yield* rowOf({ partnerId, key })).toBeUndefined()
      yield* Deferred.succeed(done, undefined)
      yield* Fiber.join(inFlight)
      expect((yield* claimKey(claimOf(partnerId, key)))._tag).toBe("Execute")
    }),
  )

  it.effect(
    "answers a completed key's retries while another request holds its lock or row: replays, IK1001, no IK1002",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = newPartner()
        const key = newKey()
        const claimToken = tokenOf(yield* claimKey(claimOf(partnerId, key)))
        yield* executeRequest({ partnerId, key, claimToken }, "done")
        const recorded = ClaimOutcome.Replay({ response: response(201, { note: "done" }) })
        // Stand for a retry replaying the key right now (white box: its advisory lock, then its row lock).
        const holds = [
          sql`SELECT pg_advisory_xact_lock(hashtextextended(${`idempotency:${partnerId}:${key}`}, 0))`,
          sql`SELECT 1 FROM idempotency_keys WHERE partner_id = ${partnerId} AND key = ${key} FOR UPDATE`,
        ]
        for (const hold of holds) {
          const held = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const holder = yield* Effect.fork(
            sql.withTransaction(
              Effect.zipRight(
                hold,
                Effect.zipRight(Deferred.succeed(held, undefined), Deferred.await(release)),
              ),
            ),
          )
          yield* Deferred.await(held)
          expect(yield* claimKey(claimOf(partnerId, key))).toEqual(recorded)
          const other = yield* Effect.flip(
            claimKey(claimOf(partnerId, key, { fingerprint: fingerprint({ body: "{}" }) })),
          )
          expect(other).toEqual(new IdempotencyKeyReused({ differs: ["body"] }))
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(holder)
        }
        // Retries arriving together all replay.
        const retries = yield* Effect.forEach(
          Array.from({ length: 20 }, () => claimKey(claimOf(partnerId, key))),
          (retry) => retry,
          { concurrency: "unbounded" },
        )
        expect(retries).toEqual(Array(20).fill(recorded))
        expect(yield* effectsOf({ partnerId, key })).toEqual(["done"])
      }),
  )

  it.effect("never waits on a key whose response is being recorded, even after its lease ran out", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const partnerId = newPartner()
      const key = newKey()
      const claimToken = tokenOf(yield* claimKey(claimOf(partnerId, key)))
      yield* age({ partnerId, key }, 31)
      const recorded = yield* Deferred.make<void>()
      const commit = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* insertEffect({ partnerId, key }, "slow but alive")
            yield* recordResponse({ partnerId, key, claimToken, response: response(201) })
            yield* Deferred.succeed(recorded, undefined)
            yield* Deferred.await(commit)
          }),
        ),
      )
      yield* Deferred.await(recorded)
      // The lease ran out, but the holder is committing its response: no takeover, and no waiting for it.
      const meanwhile = yield* Effect.flip(claimKey(claimOf(partnerId, key)))
      expect(meanwhile).toBeInstanceOf(IdempotencyKeyInProgress)
      yield* Deferred.succeed(commit, undefined)
      yield* Fiber.join(holder)
      expect(yield* claimKey(claimOf(partnerId, key))).toEqual(
        ClaimOutcome.Replay({ response: response(201) }),
      )
      expect(yield* effectsOf({ partnerId, key })).toEqual(["slow but alive"])
    }),
  )

  it.effect("executes anew once the key's lifetime ended, with a fresh lifetime, for any request", () =>
    Effect.gen(function* () {
      const partnerId = newPartner()
      const key = newKey()
      yield* executeRequest(
        { partnerId, key, claimToken: tokenOf(yield* claimKey(claimOf(partnerId, key))) },
        "day 1",
      )
      yield* age({ partnerId, key }, 86_400)
      const aged = yield* rowOf({ partnerId, key })
      const other = fingerprint({ path: "/api/points/add" })
      const anew = yield* claimKey(claimOf(partnerId, key, { fingerprint: other }))
      expect(anew).toMatchObject({ _tag: "Execute", takeover: false })
      const row = yield* rowOf({ partnerId, key })
      expect(row).toMatchObject({ state: "Claimed", response_status: null })
      expect(row?.first_received_at.getTime()).toBeGreaterThan(aged?.expires_at.getTime() ?? Number.NaN)
      expect(row?.expires_at.getTime()).toBe((row?.first_received_at.getTime() ?? 0) + 86_400_000)
      yield* executeRequest({ partnerId, key, claimToken: tokenOf(anew) }, "day 2")
      expect(yield* effectsOf({ partnerId, key })).toEqual(["day 1", "day 2"])
    }),
  )

  it.effect("keeps partners apart: the same key of two partners is two keys", () =>
    Effect.gen(function* () {
      const key = newKey("shared")
      const a = newPartner()
      const b = newPartner()
      yield* executeRequest({ partnerId: a, key, claimToken: tokenOf(yield* claimKey(claimOf(a, key))) }, "a")
      // Another request under the same key is no IK1001 for another partner, nor a replay of A's response.
      const forB = yield* claimKey(claimOf(b, key, { fingerprint: fingerprint({ body: "{}" }) }))
      expect(forB._tag).toBe("Execute")
      yield* executeRequest({ partnerId: b, key, claimToken: tokenOf(forB) }, "b")
      expect(yield* claimKey(claimOf(a, key))).toEqual(
        ClaimOutcome.Replay({ response: response(201, { note: "a" }) }),
      )
      expect(yield* claimKey(claimOf(b, key, { fingerprint: fingerprint({ body: "{}" }) }))).toEqual(
        ClaimOutcome.Replay({ response: response(201, { note: "b" }) }),
      )
      expect(yield* effectsOf({ partnerId: a, key })).toEqual(["a"])
      expect(yield* effectsOf({ partnerId: b, key })).toEqual(["b"])
    }),
  )

  describe("misuse", () => {
    it.effect("refuses to claim inside a transaction, where the claim would stay invisible", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = newPartner()
        const key = newKey()
        const exit = yield* Effect.exit(sql.withTransaction(claimKey(claimOf(partnerId, key))))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit))
          expect(Cause.pretty(exit.cause)).toContain("must not run inside a transaction")
        expect(yield* rowOf({ partnerId, key })).toBeUndefined()
      }),
    )

    it.effect("refuses a lease that is not a positive number of seconds, claiming nothing", () =>
      Effect.gen(function* () {
        const partnerId = newPartner()
        const key = newKey()
        const exit = yield* Effect.exit(claimKey(claimOf(partnerId, key, { leaseSeconds: 0 })))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(yield* rowOf({ partnerId, key })).toBeUndefined()
        expect(Either.isRight(yield* Effect.either(claimKey(claimOf(partnerId, key))))).toBe(true)
      }),
    )
  })
})

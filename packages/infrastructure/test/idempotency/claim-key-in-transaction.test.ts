import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { IdempotencyKeyInProgress, IdempotencyKeyReused } from "@points/domain"
import { Deferred, Effect, Either, Fiber } from "effect"
import { ClaimOutcome, claimKeyInTransaction, recordResponse } from "../../src/index.js"
import { eventually } from "../../src/testing/index.js"
import {
  claimOf,
  effectsOf,
  fingerprint,
  idempotencyTestDatabase,
  insertEffect,
  newKey,
  newPartner,
  response,
  rowOf,
} from "./key-fixtures.js"

class Refused {
  readonly _tag = "Refused"
}

layer(idempotencyTestDatabase({ poolSize: 10 }), { excludeTestServices: true })(
  "claimKeyInTransaction",
  (it) => {
    it.effect("claims, executes and records in one transaction; retries replay it", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = newPartner()
        const key = newKey()
        yield* sql.withTransaction(
          Effect.gen(function* () {
            const outcome = yield* claimKeyInTransaction(claimOf(partnerId, key))
            if (outcome._tag !== "Execute") return expect.unreachable("a new key executes")
            const claim = { partnerId, key, claimToken: outcome.claimToken, held: outcome.held }
            yield* insertEffect(claim, "once")
            expect(yield* recordResponse({ ...claim, response: response(201, { note: "once" }) })).toBe(
              "Completed",
            )
          }),
        )
        const again = yield* sql.withTransaction(claimKeyInTransaction(claimOf(partnerId, key)))
        expect(again).toEqual(ClaimOutcome.Replay({ response: response(201, { note: "once" }) }))
        const other = yield* Effect.flip(
          sql.withTransaction(
            claimKeyInTransaction(claimOf(partnerId, key, { fingerprint: fingerprint({ body: "{}" }) })),
          ),
        )
        expect(other).toEqual(new IdempotencyKeyReused({ differs: ["body"] }))
        expect(yield* effectsOf({ partnerId, key })).toEqual(["once"])
      }),
    )

    it.effect("takes a claim over after its lease when the claiming transaction hangs idle", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = newPartner()
        const key = newKey()
        const claimed = yield* Deferred.make<void>()
        // A request that claims the key and then never speaks to the database again (a hung process).
        const hung = yield* Effect.fork(
          sql.withTransaction(
            Effect.zipRight(
              // Two seconds: the second claim below must still find it held on a slow machine.
              claimKeyInTransaction(claimOf(partnerId, key, { leaseSeconds: 2 })),
              Effect.zipRight(Deferred.succeed(claimed, undefined), Effect.never),
            ),
          ),
        )
        yield* Deferred.await(claimed)
        const busy = yield* Effect.flip(sql.withTransaction(claimKeyInTransaction(claimOf(partnerId, key))))
        expect(busy).toEqual(new IdempotencyKeyInProgress())
        // After the lease the server ends the hung transaction; the claim rolls back with it and a retry runs.
        const taken = yield* eventually(
          Effect.map(
            Effect.either(sql.withTransaction(claimKeyInTransaction(claimOf(partnerId, key)))),
            (r) => (Either.isRight(r) ? r.right._tag : "busy"),
          ),
          (outcome) => outcome === "Execute",
        )
        expect(taken).toBe("Execute")
        yield* Fiber.interrupt(hung)
      }),
    )

    it.effect("holds the key until its transaction ends: a concurrent claim gets IK1002 at once", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = newPartner()
        const key = newKey()
        const claimed = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()
        const first = yield* Effect.fork(
          sql.withTransaction(
            Effect.gen(function* () {
              const outcome = yield* claimKeyInTransaction(claimOf(partnerId, key))
              if (outcome._tag !== "Execute") return expect.unreachable("a new key executes")
              yield* Deferred.succeed(claimed, undefined)
              yield* Deferred.await(finish)
              const claim = { partnerId, key, claimToken: outcome.claimToken, held: outcome.held }
              yield* insertEffect(claim, "first")
              yield* recordResponse({ ...claim, response: response(201) })
            }),
          ),
        )
        yield* Deferred.await(claimed)
        // On another connection, while the first transaction is still open: refused without waiting.
        const busy = yield* Effect.flip(sql.withTransaction(claimKeyInTransaction(claimOf(partnerId, key))))
        expect(busy).toEqual(new IdempotencyKeyInProgress())
        yield* Deferred.succeed(finish, undefined)
        yield* Fiber.join(first)
        const after = yield* sql.withTransaction(claimKeyInTransaction(claimOf(partnerId, key)))
        expect(after._tag).toBe("Replay")
        expect(yield* effectsOf({ partnerId, key })).toEqual(["first"])
      }),
    )

    it.effect("leaves nothing behind when its transaction rolls back: the key executes anew", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = newPartner()
        const key = newKey()
        const failed = yield* Effect.either(
          sql.withTransaction(
            Effect.gen(function* () {
              const outcome = yield* claimKeyInTransaction(claimOf(partnerId, key))
              if (outcome._tag !== "Execute") return expect.unreachable("a new key executes")
              yield* insertEffect({ partnerId, key }, "rolled back")
              // A 5xx or a crash before the commit.
              return yield* Effect.fail(new Refused())
            }),
          ),
        )
        expect(Either.isLeft(failed)).toBe(true)
        expect(yield* rowOf({ partnerId, key })).toBeUndefined()
        expect(yield* effectsOf({ partnerId, key })).toEqual([])
        const retry = yield* sql.withTransaction(claimKeyInTransaction(claimOf(partnerId, key)))
        expect(retry).toMatchObject({ _tag: "Execute", takeover: false })
      }),
    )

    it.effect("records a refusal after the business savepoint rolled back, without its effect", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = newPartner()
        const key = newKey()
        yield* sql.withTransaction(
          Effect.gen(function* () {
            const outcome = yield* claimKeyInTransaction(claimOf(partnerId, key))
            if (outcome._tag !== "Execute") return expect.unreachable("a new key executes")
            const claim = { partnerId, key, claimToken: outcome.claimToken, held: outcome.held }
            const business = yield* Effect.either(
              sql.withTransaction(Effect.zipRight(insertEffect(claim, "undone"), Effect.fail(new Refused()))),
            )
            expect(Either.isLeft(business)).toBe(true)
            yield* recordResponse({ ...claim, response: response(409) })
          }),
        )
        expect(yield* rowOf({ partnerId, key })).toMatchObject({ state: "Completed", response_status: 409 })
        expect(yield* effectsOf({ partnerId, key })).toEqual([])
      }),
    )

    it.effect("refuses to run outside a transaction", () =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(claimKeyInTransaction(claimOf(newPartner(), newKey())))
        expect(exit._tag).toBe("Failure")
      }),
    )
  },
)

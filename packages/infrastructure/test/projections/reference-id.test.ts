import { describe, expect, layer } from "@effect/vitest"
import { DuplicateReferenceId } from "@points/domain"
import { Effect, Either } from "effect"
import { findOrders, findTransactions, getPointsAccount, ledgerStream, readStream } from "../../src/index.js"
import {
  activeUser,
  addPoints,
  addPointsUnreserved,
  item,
  placeOrder,
  projectionDatabase,
  registerPartner,
} from "./commands.js"

const CONCURRENT = 12

const duplicates = <A, E>(results: ReadonlyArray<Either.Either<A, E>>) =>
  results.filter((result) => Either.isLeft(result) && result.left instanceof DuplicateReferenceId)

const expectDuplicate = (error: unknown, kind: string, referenceId: string) => {
  expect(error).toBeInstanceOf(DuplicateReferenceId)
  expect(error).toMatchObject({ kind, referenceId, code: "LE0006" })
}

// More connections than concurrent writers, so that they really race in the database.
layer(projectionDatabase({ poolSize: CONCURRENT + 4 }))("reference_id uniqueness", (it) => {
  it.effect(
    "of concurrent adds with one reference_id, exactly one succeeds and the balance counts it once",
    () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        const userId = yield* activeUser(partnerId)
        const results = yield* Effect.all(
          Array.from({ length: CONCURRENT }, () => Effect.either(addPoints(partnerId, userId, 100, "pay-1"))),
          { concurrency: "unbounded" },
        )
        expect(results.filter(Either.isRight)).toHaveLength(1)
        expect(duplicates(results)).toHaveLength(CONCURRENT - 1)
        const first = duplicates(results)[0]
        expectDuplicate(
          first !== undefined && Either.isLeft(first) ? first.left : null,
          "transaction",
          "pay-1",
        )
        expect((yield* getPointsAccount(partnerId, userId)).balance).toBe(100)
        expect((yield* findTransactions(partnerId, { reference_id: "pay-1" })).data).toHaveLength(1)
      }),
  )

  it.effect("the reservation holds across users: one add per partner reference_id", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const users = yield* Effect.forEach(Array.from({ length: CONCURRENT }), () => activeUser(partnerId))
      const results = yield* Effect.all(
        users.map((userId) => Effect.either(addPoints(partnerId, userId, 10, "pay-2"))),
        { concurrency: "unbounded" },
      )
      expect(results.filter(Either.isRight)).toHaveLength(1)
      expect(duplicates(results)).toHaveLength(CONCURRENT - 1)
      expect((yield* findTransactions(partnerId, { reference_id: "pay-2" })).data).toHaveLength(1)
    }),
  )

  describe("the database's unique indexes, behind the reservation", () => {
    it.effect("refuse a second add with a reference_id, as LE0006, appending nothing", () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        const users = yield* Effect.forEach(Array.from({ length: CONCURRENT }), () => activeUser(partnerId))
        // Different users: no stream in common, so only the unique index can stop the second one.
        const results = yield* Effect.all(
          users.map((userId) => Effect.either(addPointsUnreserved(partnerId, userId, 10, "unreserved-1"))),
          { concurrency: "unbounded" },
        )
        expect(results.filter(Either.isRight)).toHaveLength(1)
        const refused = duplicates(results)
        expect(refused).toHaveLength(CONCURRENT - 1)
        for (const result of refused) {
          expectDuplicate(Either.isLeft(result) ? result.left : null, "transaction", "unreserved-1")
        }
        // The losers' units of work rolled back: their ledgers hold no event.
        const versions = yield* Effect.forEach(users, (userId) =>
          Effect.map(readStream(ledgerStream(userId).streamId, partnerId), (read) => read.version),
        )
        expect(versions.filter((version) => version > 0n)).toHaveLength(1)
        expect((yield* findTransactions(partnerId, { reference_id: "unreserved-1" })).data).toHaveLength(1)
      }),
    )

    it.effect("refuse a second order with a reference_id, as LE0006, without debiting", () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        const first = yield* activeUser(partnerId)
        const second = yield* activeUser(partnerId)
        yield* addPoints(partnerId, first, 100)
        yield* addPoints(partnerId, second, 100)
        yield* placeOrder(partnerId, first, [item("A", 1, 40)], { referenceId: "cart-9", reserve: false })
        const again = yield* Effect.flip(
          placeOrder(partnerId, second, [item("A", 1, 40)], { referenceId: "cart-9", reserve: false }),
        )
        expectDuplicate(again, "order", "cart-9")
        expect((yield* getPointsAccount(partnerId, second)).balance).toBe(100)
        expect((yield* findOrders(partnerId, { reference_id: "cart-9" })).data.map((o) => o.user_id)).toEqual(
          [first],
        )
      }),
    )

    it.effect(
      "scope reference_ids by partner and kind: the same id as another partner's, or an order's",
      () =>
        Effect.gen(function* () {
          const a = yield* registerPartner()
          const b = yield* registerPartner()
          const userA = yield* activeUser(a)
          const userB = yield* activeUser(b)
          yield* addPointsUnreserved(a, userA, 100, "shared")
          yield* addPointsUnreserved(b, userB, 100, "shared")
          // An order and its debit and refund may carry the reference_id of an add: another kind.
          yield* placeOrder(a, userA, [item("A", 1, 10)], { referenceId: "shared" })
          expect((yield* findTransactions(a, { reference_id: "shared" })).data.map((t) => t.type)).toEqual([
            "add",
            "order_debit",
          ])
          expect((yield* findTransactions(b, { reference_id: "shared" })).data).toHaveLength(1)
        }),
    )
  })
})

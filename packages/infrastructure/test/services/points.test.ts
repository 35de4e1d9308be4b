import { describe, expect, layer } from "@effect/vitest"
import {
  AlreadyClosed,
  DuplicateReferenceId,
  InsufficientPoints,
  NoPointsAccount,
  PointsAccountConflict,
  UserBeingProcessed,
} from "@points/domain"
import { Effect } from "effect"
import {
  addPoints,
  closeUser,
  getPointsAccountResource,
  getTransactionResource,
  getUserResource,
  listTransactions,
  openPointsAccount,
  subtractPoints,
} from "../../src/index.js"
import { newId } from "../fixtures.js"
import {
  activeUser,
  movement,
  newPartner,
  newReference,
  notFound,
  processingUser,
  refusedWith,
  serviceDatabase,
} from "./service-fixtures.js"

layer(serviceDatabase(), { excludeTestServices: true })("points services", (it) => {
  describe("openPointsAccount", () => {
    it.effect("opens an empty account, linked from the user; a second one is LE1001 (409)", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* activeUser(context)
        const account = yield* openPointsAccount(context, userId)
        expect(account).toMatchObject({ user_id: userId, balance: 0, status: "open", version: 1 })
        expect(yield* getPointsAccountResource(context, userId)).toEqual(account)
        const before = yield* getUserResource(context, userId)
        expect(before.points_account_id).toBe(account.id)
        // Naming the account is a change of the user: its version grows (registered, activated, linked).
        expect(before.version).toBe(3)
        expect(before.updated_at).toBe(account.created_at)
        const again = yield* Effect.flip(openPointsAccount(context, userId))
        expect(yield* getUserResource(context, userId)).toEqual(before)
        refusedWith(PointsAccountConflict, "LE1001")(again)
        expect((again as PointsAccountConflict).status).toBe(409)
      }),
    )

    it.effect("LE0002 for an unknown user, LE0001 while processing, LE0004 once closed", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        notFound("user")(yield* Effect.flip(openPointsAccount(context, newId())))
        notFound("user")(yield* Effect.flip(openPointsAccount(context, "nope")))
        const processing = yield* processingUser(context)
        refusedWith(UserBeingProcessed, "LE0001")(yield* Effect.flip(openPointsAccount(context, processing)))
        const closed = yield* activeUser(context)
        yield* closeUser(context, closed)
        refusedWith(AlreadyClosed, "LE0004")(yield* Effect.flip(openPointsAccount(context, closed)))
      }),
    )

    it.effect("the GET names the user when it is unknown, the account when the user has none", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* activeUser(context)
        notFound("points account")(yield* Effect.flip(getPointsAccountResource(context, userId)))
        notFound("user")(yield* Effect.flip(getPointsAccountResource(context, newId())))
      }),
    )
  })

  describe("addPoints and subtractPoints", () => {
    it.effect("the first add opens the account; each answer is the transaction its GET returns", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* activeUser(context)
        const added = yield* addPoints(context, { ...movement(userId, 100), description: "welcome" })
        const account = yield* getPointsAccountResource(context, userId)
        expect(added).toMatchObject({
          account_id: account.id,
          user_id: userId,
          type: "add",
          amount: 100,
          balance_after: 100,
          description: "welcome",
          order_id: null,
        })
        expect(yield* getTransactionResource(context, added.id)).toEqual(added)
        const user = yield* getUserResource(context, userId)
        expect(user).toMatchObject({ points_account_id: account.id, version: 3 })
        const subtracted = yield* subtractPoints(context, movement(userId, 30))
        expect(subtracted).toMatchObject({
          type: "subtract",
          amount: 30,
          balance_after: 70,
          description: null,
        })
        expect(yield* getTransactionResource(context, subtracted.id)).toEqual(subtracted)
        expect((yield* getPointsAccountResource(context, userId)).balance).toBe(70)
        // Later movements change the account, not the user.
        yield* addPoints(context, movement(userId, 1))
        expect(yield* getUserResource(context, userId)).toEqual(user)
      }),
    )

    it.effect("subtract without an account is LE2001, beyond the balance LE2002, and changes nothing", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* activeUser(context)
        refusedWith(
          NoPointsAccount,
          "LE2001",
        )(yield* Effect.flip(subtractPoints(context, movement(userId, 1))))
        yield* addPoints(context, movement(userId, 10))
        const refused = yield* Effect.flip(subtractPoints(context, movement(userId, 11)))
        refusedWith(InsufficientPoints, "LE2002")(refused)
        expect(refused).toMatchObject({ balance: 10, requested: 11 })
        expect((yield* getPointsAccountResource(context, userId)).balance).toBe(10)
        expect((yield* listTransactions(context, { user_id: userId })).data).toHaveLength(1)
      }),
    )

    it.effect("add is LE0001 while processing, LE0002 for an unknown user", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const processing = yield* processingUser(context)
        refusedWith(
          UserBeingProcessed,
          "LE0001",
        )(yield* Effect.flip(addPoints(context, movement(processing, 5))))
        notFound("user")(yield* Effect.flip(addPoints(context, movement(newId(), 5))))
        notFound("user")(yield* Effect.flip(subtractPoints(context, movement("x", 5))))
      }),
    )

    it.effect("a reference id is taken once per partner (LE0006), and each partner has its own", () =>
      Effect.gen(function* () {
        const a = yield* newPartner("A")
        const b = yield* newPartner("B")
        const userOfA = yield* activeUser(a)
        const userOfB = yield* activeUser(b)
        const reference = newReference("invoice")
        const first = yield* addPoints(a, movement(userOfA, 10, reference))
        const duplicate = yield* Effect.flip(addPoints(a, movement(userOfA, 10, reference)))
        refusedWith(DuplicateReferenceId, "LE0006")(duplicate)
        refusedWith(
          DuplicateReferenceId,
          "LE0006",
        )(yield* Effect.flip(subtractPoints(a, movement(userOfA, 1, reference))))
        const other = yield* addPoints(b, movement(userOfB, 20, reference))
        expect((yield* listTransactions(a, { reference_id: reference })).data).toEqual([first])
        expect((yield* listTransactions(b, { reference_id: reference })).data).toEqual([other])
        expect((yield* getPointsAccountResource(a, userOfA)).balance).toBe(10)
      }),
    )

    it.effect("another partner's user and transaction are LE0002", () =>
      Effect.gen(function* () {
        const a = yield* newPartner("A")
        const b = yield* newPartner("B")
        const userOfA = yield* activeUser(a)
        const added = yield* addPoints(a, movement(userOfA, 10))
        notFound("transaction")(yield* Effect.flip(getTransactionResource(b, added.id)))
        notFound("transaction")(yield* Effect.flip(getTransactionResource(a, "nope")))
        notFound("user")(yield* Effect.flip(addPoints(b, movement(userOfA, 10))))
        notFound("user")(yield* Effect.flip(subtractPoints(b, movement(userOfA, 1))))
        notFound("user")(yield* Effect.flip(getPointsAccountResource(b, userOfA)))
        expect((yield* listTransactions(b, { user_id: userOfA })).data).toEqual([])
        expect((yield* getPointsAccountResource(a, userOfA)).balance).toBe(10)
      }),
    )

    it.effect("concurrent adds to one account all land, each balance_after distinct", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* activeUser(context)
        yield* addPoints(context, movement(userId, 1))
        const added = yield* Effect.all(
          Array.from({ length: 4 }, (_, n) => addPoints(context, movement(userId, 10 ** n))),
          { concurrency: "unbounded" },
        )
        expect(new Set(added.map((transaction) => transaction.balance_after)).size).toBe(4)
        expect((yield* getPointsAccountResource(context, userId)).balance).toBe(1 + 1 + 10 + 100 + 1000)
      }),
    )
  })
})

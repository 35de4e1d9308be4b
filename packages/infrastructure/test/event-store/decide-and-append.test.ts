import type { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import {
  AccountId,
  Email,
  InsufficientPoints,
  Ledger,
  NoPointsAccount,
  Order,
  OrderId,
  PartnerId,
  PartnerUserId,
  Points,
  ReferenceId,
  Sku,
  TransactionId,
  User,
  UserId,
  Workflows,
} from "@points/domain"
import { Effect, Either, Layer, Ref, Runtime } from "effect"
import {
  type AppendContext,
  decideAndAppend,
  InlineProjection,
  LogNotifier,
  ledgerStream,
  orderStream,
  readStream,
  type StreamChange,
  StreamVersionConflict,
  userStream,
} from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { contextFor, newId } from "../fixtures.js"

// Records what the unit of work hands to the inline projection, so the hook itself can be checked.
const projected = Ref.unsafeMake<ReadonlyArray<StreamChange>>([])
const RecordingProjection = Layer.succeed(InlineProjection, {
  apply: (change: StreamChange) => Ref.update(projected, (all) => [...all, change]),
})

/** An active user with `points` points, created through the unit of work. */
const activeUserWith = (context: AppendContext, points: number) =>
  Effect.gen(function* () {
    const userId = newId()
    const streams = { user: userStream(userId) }
    yield* decideAndAppend(
      streams,
      ({ user }) =>
        Effect.gen(function* () {
          const register = User.RegisterUser.make({
            userId: UserId.make(userId),
            partnerId: PartnerId.make(context.partnerId),
            partnerUserId: PartnerUserId.make("p-1"),
            email: Email.make("ada@example.com"),
            name: null,
          })
          const registered = yield* User.decide(register, user)
          const activated = yield* User.decide(
            User.ActivateUser.make({ userId: UserId.make(userId) }),
            registered.reduce(User.evolve, user),
          )
          return { user: [...registered, ...activated] }
        }),
      context,
    )
    yield* decideAndAppend(
      { ledger: ledgerStream(userId) },
      ({ ledger }) =>
        Effect.map(
          Ledger.decide(
            Ledger.AddPoints.make({
              userId: UserId.make(userId),
              accountId: AccountId.make(newId()),
              transactionId: TransactionId.make(newId()),
              amount: Points.make(points),
              referenceId: ReferenceId.make(`welcome-${userId}`),
              description: null,
              holder: "active",
            }),
            ledger,
          ),
          (events) => ({ ledger: events }),
        ),
      context,
    )
    return userId
  })

const placeOrder = (context: AppendContext, userId: string, points: number, options = {}) => {
  const orderId = newId()
  return decideAndAppend(
    { user: userStream(userId), ledger: ledgerStream(userId), order: orderStream(orderId) },
    ({ user, ledger, order }) =>
      Workflows.placeOrder(
        { holder: User.standingOf(user), ledger, order },
        Order.PlaceOrder.make({
          orderId: OrderId.make(orderId),
          userId: UserId.make(userId),
          referenceId: ReferenceId.make(`order-${orderId}`),
          items: [{ sku: Sku.make("SKU-1"), name: null, quantity: 1, points: Points.make(points) }],
          debitTransactionId: TransactionId.make(newId()),
        }),
      ),
    context,
    options,
  )
}

layer(testDatabase().pipe(Layer.merge(RecordingProjection), Layer.merge(LogNotifier.none)))(
  "decideAndAppend",
  (it) => {
    describe("one decision, several streams, one transaction", () => {
      it.effect("places an order: the order and its debit land together, the user stream is only read", () =>
        Effect.gen(function* () {
          const context = contextFor(newId())
          const userId = yield* activeUserWith(context, 100)
          yield* Ref.set(projected, [])
          const outcome = yield* placeOrder(context, userId, 40)
          expect(outcome.appended.order.map((e) => e.type)).toEqual(["OrderPlaced"])
          expect(outcome.appended.ledger.map((e) => e.type)).toEqual(["OrderDebited"])
          expect(outcome.appended.user).toEqual([])
          expect(outcome.states.ledger._tag === "Open" && outcome.states.ledger.balance).toBe(60)
          // Both events were written by one database transaction.
          expect(outcome.appended.order[0]?.transactionId).toBe(outcome.appended.ledger[0]?.transactionId)
          const changes = yield* Ref.get(projected)
          expect(changes.map((c) => c.streamId).sort()).toEqual(
            [outcome.appended.ledger[0]?.streamId, outcome.appended.order[0]?.streamId].sort(),
          )
          const ledgerChange = changes.find((c) => c.streamId.startsWith("ledger-"))
          expect((ledgerChange?.state as Ledger.LedgerState | undefined)?._tag).toBe("Open")
        }),
      )

      it.effect("a refused decision (LE2002) appends nothing to any stream", () =>
        Effect.gen(function* () {
          const context = contextFor(newId())
          const userId = yield* activeUserWith(context, 10)
          const before = yield* readStream(ledgerStream(userId).streamId, context.partnerId)
          const refused = yield* Effect.flip(placeOrder(context, userId, 11))
          expect(refused).toEqual(new InsufficientPoints({ balance: 10, requested: 11 }))
          const after = yield* readStream(ledgerStream(userId).streamId, context.partnerId)
          expect(after.version).toBe(before.version)
        }),
      )
    })

    describe("concurrency", () => {
      it.effect("a stream only read that changes before commit forces a new decision on the new state", () =>
        Effect.gen(function* () {
          const context = contextFor(newId())
          const userId = yield* activeUserWith(context, 100)
          // A runtime captured outside the unit of work writes on another connection, as a concurrent request.
          const outside = yield* Effect.runtime<SqlClient.SqlClient | InlineProjection | LogNotifier>()
          const closeUser = decideAndAppend(
            { user: userStream(userId), ledger: ledgerStream(userId) },
            (states) => Workflows.closeUser(states, { userId: UserId.make(userId) }),
            context,
          )
          let attempts = 0
          const orderId = newId()
          const result = yield* Effect.either(
            decideAndAppend(
              { user: userStream(userId), ledger: ledgerStream(userId), order: orderStream(orderId) },
              ({ user, ledger, order }) =>
                Effect.gen(function* () {
                  attempts++
                  if (attempts === 1) {
                    yield* Effect.promise(() => Runtime.runPromise(outside)(closeUser.pipe(Effect.orDie)))
                  }
                  return yield* Workflows.placeOrder(
                    { holder: User.standingOf(user), ledger, order },
                    Order.PlaceOrder.make({
                      orderId: OrderId.make(orderId),
                      userId: UserId.make(userId),
                      referenceId: ReferenceId.make(`order-${orderId}`),
                      items: [{ sku: Sku.make("SKU-1"), name: null, quantity: 1, points: Points.make(5) }],
                      debitTransactionId: TransactionId.make(newId()),
                    }),
                  )
                }),
              context,
            ),
          )
          expect(attempts).toBe(2)
          expect(Either.isLeft(result) && result.left).toEqual(
            // The buyer was closed in between, and its account with it (DESIGN.md: LE2001).
            new NoPointsAccount({ userId }),
          )
          const order = yield* readStream(orderStream(orderId).streamId, context.partnerId)
          expect(order.version).toBe(0n)
        }),
      )

      it.effect("gives up with StreamVersionConflict after its bounded attempts", () =>
        Effect.gen(function* () {
          const context = contextFor(newId())
          const userId = yield* activeUserWith(context, 100)
          const outside = yield* Effect.runtime<SqlClient.SqlClient | InlineProjection | LogNotifier>()
          const addPoints = (amount: number) =>
            decideAndAppend(
              { ledger: ledgerStream(userId) },
              ({ ledger }) =>
                Effect.map(
                  Ledger.decide(
                    Ledger.AddPoints.make({
                      userId: UserId.make(userId),
                      accountId: AccountId.make(newId()),
                      transactionId: TransactionId.make(newId()),
                      amount: Points.make(amount),
                      referenceId: ReferenceId.make(`ref-${newId()}`),
                      description: null,
                      holder: "active",
                    }),
                    ledger,
                  ),
                  (events) => ({ ledger: events }),
                ),
              context,
            )
          let attempts = 0
          const result = yield* Effect.either(
            decideAndAppend(
              { ledger: ledgerStream(userId) },
              ({ ledger }) =>
                Effect.gen(function* () {
                  attempts++
                  // Every attempt loses the race to a writer outside.
                  yield* Effect.promise(() => Runtime.runPromise(outside)(addPoints(1).pipe(Effect.orDie)))
                  const events = yield* Ledger.decide(
                    Ledger.AddPoints.make({
                      userId: UserId.make(userId),
                      accountId: AccountId.make(newId()),
                      transactionId: TransactionId.make(newId()),
                      amount: Points.make(7),
                      referenceId: ReferenceId.make(`ref-${newId()}`),
                      description: null,
                      holder: "active",
                    }),
                    ledger,
                  )
                  return { ledger: events }
                }),
              context,
              { maxAttempts: 3 },
            ),
          )
          expect(attempts).toBe(3)
          expect(Either.isLeft(result) && result.left).toBeInstanceOf(StreamVersionConflict)
          const ledger = yield* readStream(ledgerStream(userId).streamId, context.partnerId)
          const amounts = ledger.events.flatMap((e) =>
            e.event instanceof Ledger.PointsAdded ? [e.event.amount] : [],
          )
          expect(amounts).toEqual([100, 1, 1, 1])
        }),
      )
    })
  },
)

import type { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import {
  AccountId,
  Email,
  InsufficientPoints,
  Ledger,
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
import { Deferred, Effect, Either, Fiber, Layer, Ref, Runtime, Schedule } from "effect"
import {
  type AppendContext,
  decideAndAppend,
  InlineProjection,
  LogNotifier,
  ledgerStream,
  orderStream,
  readOnly,
  readStream,
  type StreamChange,
  StreamVersionConflict,
  userStream,
} from "../../src/index.js"
import { lockWaiters, testDatabase } from "../../src/testing/index.js"
import { contextFor, newId } from "../fixtures.js"

// Records what the unit of work hands to the inline projection, so the hook itself can be checked.
const projected = Ref.unsafeMake<ReadonlyArray<StreamChange>>([])
const RecordingProjection = Layer.succeed(InlineProjection, {
  apply: (change: StreamChange) => Ref.update(projected, (all) => [...all, change]),
})

/** An active user with `points` points (no points account when null), created through the unit of work. */
const activeUserWith = (context: AppendContext, points: number | null) =>
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
    if (points !== null) yield* addPointsTo(context, userId, points)
    return userId
  })

const placeOrder = (
  context: AppendContext,
  userId: string,
  points: number,
  options = {},
  beforeDecision: () => Effect.Effect<void> = () => Effect.void,
) => {
  const orderId = newId()
  return decideAndAppend(
    { user: readOnly(userStream(userId)), ledger: ledgerStream(userId), order: orderStream(orderId) },
    ({ user, ledger, order }) =>
      Effect.zipRight(
        beforeDecision(),
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
      ),
    context,
    options,
  )
}

/** Adds points to a user's ledger in a unit of work of its own, running `beforeDecision` once it is loaded. */
const addPointsTo = (
  context: AppendContext,
  userId: string,
  amount: number,
  beforeDecision: () => Effect.Effect<void> = () => Effect.void,
  options: { readonly maxAttempts?: number } = {},
) =>
  decideAndAppend(
    { ledger: ledgerStream(userId) },
    ({ ledger }) =>
      Effect.zipRight(
        beforeDecision(),
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
      ),
    context,
    options,
  )

/** The amounts added to a user's ledger, in stream order. */
const amountsOf = (context: AppendContext, userId: string) =>
  Effect.map(readStream(ledgerStream(userId).streamId, context.partnerId), (ledger) =>
    ledger.events.flatMap((e) => (e.event instanceof Ledger.PointsAdded ? [e.event.amount as number] : [])),
  )

/** Polls (for at most 10 s) until `count` statements of this database wait on a lock. */
const waitUntilLockWaiters = (count: number) =>
  Effect.gen(function* () {
    yield* lockWaiters.pipe(
      Effect.uninterruptible,
      Effect.repeat({ until: (n) => n >= count, schedule: Schedule.spaced("20 millis") }),
      Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`no ${count} lock waiters`) }),
      Effect.orDie,
    )
  })

layer(testDatabase().pipe(Layer.merge(RecordingProjection), Layer.merge(LogNotifier.none)), {
  excludeTestServices: true,
})("decideAndAppend", (it) => {
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
    it.effect("a writer of a stream the unit locked waits for it, then decides on the state it left", () =>
      Effect.gen(function* () {
        const context = contextFor(newId())
        const userId = yield* activeUserWith(context, 100)
        const loaded = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        let attempts = 0
        const first = yield* Effect.fork(
          addPointsTo(context, userId, 7, () =>
            Effect.gen(function* () {
              attempts++
              yield* Deferred.succeed(loaded, undefined)
              yield* Deferred.await(release)
            }),
          ),
        )
        yield* Deferred.await(loaded)
        // Started while the first unit holds the ledger: it must queue on the stream's row, not race.
        const second = yield* Effect.fork(addPointsTo(context, userId, 1))
        yield* waitUntilLockWaiters(1)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        const outcome = yield* Fiber.join(second)
        expect(attempts).toBe(1)
        expect(outcome.states.ledger._tag === "Open" && outcome.states.ledger.balance).toBe(108)
        expect(yield* amountsOf(context, userId)).toEqual([100, 7, 1])
      }),
    )

    it.effect("a stream only read is locked FOR SHARE: a writer of it waits until the unit commits", () =>
      Effect.gen(function* () {
        const context = contextFor(newId())
        const userId = yield* activeUserWith(context, 100)
        const loaded = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const order = yield* Effect.fork(
          placeOrder(context, userId, 40, {}, () =>
            Effect.zipRight(Deferred.succeed(loaded, undefined), Deferred.await(release)),
          ),
        )
        yield* Deferred.await(loaded)
        const rename = yield* Effect.fork(
          decideAndAppend(
            { user: userStream(userId) },
            ({ user }) =>
              Effect.map(
                User.decide(User.UpdateUser.make({ userId: UserId.make(userId), name: "Grace" }), user),
                (events) => ({ user: events }),
              ),
            context,
          ),
        )
        yield* waitUntilLockWaiters(1)
        yield* Deferred.succeed(release, undefined)
        const placed = yield* Fiber.join(order)
        const renamed = yield* Fiber.join(rename)
        // The order committed first, on the user as it was loaded; the update came after it.
        expect(renamed.appended.user[0]?.globalPosition).toBeGreaterThan(
          placed.appended.order[0]?.globalPosition ?? Number.MAX_SAFE_INTEGER,
        )
      }),
    )

    it.effect("concurrent writers of one stream all succeed, in turn, without losing an update", () =>
      Effect.gen(function* () {
        const context = contextFor(newId())
        const userId = yield* activeUserWith(context, 100)
        const amounts = Array.from({ length: 20 }, (_, n) => n + 1)
        yield* Effect.forEach(amounts, (amount) => addPointsTo(context, userId, amount), {
          concurrency: "unbounded",
          discard: true,
        })
        const ledger = yield* readStream(ledgerStream(userId).streamId, context.partnerId)
        expect(ledger.events.map((e) => e.streamVersion)).toEqual(
          Array.from({ length: 22 }, (_, n) => BigInt(n + 1)),
        )
        expect([...(yield* amountsOf(context, userId))].sort((a, b) => a - b)).toEqual([...amounts, 100])
      }),
    )

    it.effect("a stream created by another writer after the load is a conflict, decided again on it", () =>
      Effect.gen(function* () {
        const context = contextFor(newId())
        const userId = yield* activeUserWith(context, null)
        // A runtime captured outside the unit of work writes on another connection, as a concurrent request.
        const outside = yield* Effect.runtime<SqlClient.SqlClient | InlineProjection | LogNotifier>()
        let attempts = 0
        const outcome = yield* addPointsTo(context, userId, 7, () =>
          Effect.gen(function* () {
            attempts++
            // The ledger had no row to lock at load: the other writer creates it meanwhile.
            if (attempts === 1) {
              yield* Effect.promise(() => Runtime.runPromise(outside)(addPointsTo(context, userId, 1)))
            }
          }),
        )
        expect(attempts).toBe(2)
        expect(outcome.states.ledger._tag === "Open" && outcome.states.ledger.balance).toBe(8)
        expect(yield* amountsOf(context, userId)).toEqual([1, 7])
      }),
    )

    it.effect("gives up with StreamVersionConflict after its bounded attempts", () =>
      Effect.gen(function* () {
        const context = contextFor(newId())
        const userId = yield* activeUserWith(context, null)
        const outside = yield* Effect.runtime<SqlClient.SqlClient | InlineProjection | LogNotifier>()
        let attempts = 0
        const result = yield* Effect.either(
          addPointsTo(
            context,
            userId,
            7,
            () =>
              Effect.gen(function* () {
                attempts++
                yield* Effect.promise(() => Runtime.runPromise(outside)(addPointsTo(context, userId, 1)))
              }),
            { maxAttempts: 1 },
          ),
        )
        expect(attempts).toBe(1)
        expect(Either.isLeft(result) && result.left).toBeInstanceOf(StreamVersionConflict)
        expect(yield* amountsOf(context, userId)).toEqual([1])
      }),
    )
  })
})

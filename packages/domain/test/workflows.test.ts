import { addEqualityTesters, describe, expect, it } from "@effect/vitest"
import { Cause, Clock, DateTime, Duration, Effect, Exit } from "effect"
import {
  AlreadyClosed,
  DuplicateReferenceId,
  Email,
  IllegalOrderTransition,
  InsufficientPoints,
  InvariantViolation,
  Ledger,
  NoPointsAccount,
  Order,
  PartnerUserId,
  Points,
  PointsBalance,
  Reference,
  ReferenceId,
  ResourceNotFound,
  type TransactionId,
  User,
  UserBeingProcessed,
  Workflows,
} from "../src/index.js"
import { replay } from "../src/testing/index.js"
import { epoch, partnerId, userId } from "./fixtures.js"
import {
  accountId,
  addTransactionId,
  debitTransactionId,
  orderId,
  orderReferenceId,
  otherOrderId,
  otherTransactionId,
  referenceId,
  refundTransactionId,
  sku,
} from "./ledger-fixtures.js"

// Events are Effect data: compare them with Equal, so that timestamps and item arrays compare by value.
addEqualityTesters()

const items: ReadonlyArray<Order.OrderItem> = [{ sku, name: "Mug", quantity: 4, points: Points.make(100) }]
const place = Order.PlaceOrder.make({
  orderId,
  userId,
  referenceId: orderReferenceId,
  items,
  debitTransactionId,
})

const registered = User.UserRegistered.make({
  userId,
  partnerId,
  partnerUserId: PartnerUserId.make("p-1"),
  email: Email.make("ada@example.com"),
  name: null,
  at: epoch,
})
const activated = User.UserActivated.make({ userId, at: epoch })
const userClosed = User.UserClosed.make({ userId, at: epoch })

const opened = Ledger.AccountOpened.make({ accountId, userId, at: epoch })
const accountClosed = Ledger.AccountClosed.make({ accountId, userId, at: epoch })
const added = Ledger.PointsAdded.make({
  transactionId: addTransactionId,
  accountId,
  userId,
  amount: Points.make(500),
  balanceAfter: PointsBalance.make(500),
  referenceId,
  description: null,
  at: epoch,
})
const debited = Ledger.OrderDebited.make({
  transactionId: debitTransactionId,
  accountId,
  userId,
  orderId,
  amount: Points.make(400),
  balanceAfter: PointsBalance.make(100),
  referenceId: orderReferenceId,
  at: epoch,
})
const refunded = Ledger.OrderRefunded.make({
  transactionId: refundTransactionId,
  accountId,
  userId,
  orderId,
  amount: Points.make(400),
  balanceAfter: PointsBalance.make(500),
  referenceId: orderReferenceId,
  at: epoch,
})

const placed = Order.OrderPlaced.make({
  orderId,
  userId,
  referenceId: orderReferenceId,
  items,
  totalPoints: Points.make(400),
  debitTransactionId,
  at: epoch,
})
const processing = Order.OrderProcessingStarted.make({ orderId, at: epoch })
const reason = "item FAIL-1 cannot be delivered"
const failed = Order.OrderFailed.make({ orderId, reason, at: epoch })
const cancelled = Order.OrderCancelled.make({ orderId, at: epoch })

// A second order of the same buyer, with its own total and reference id, debited after the first one.
const otherReferenceId = ReferenceId.make("order-ref-2")
const otherPlaced = Order.OrderPlaced.make({
  orderId: otherOrderId,
  userId,
  referenceId: otherReferenceId,
  items: [{ sku, name: "Pen", quantity: 3, points: Points.make(25) }],
  totalPoints: Points.make(75),
  debitTransactionId: otherTransactionId,
  at: epoch,
})
const otherDebited = Ledger.OrderDebited.make({
  transactionId: otherTransactionId,
  accountId,
  userId,
  orderId: otherOrderId,
  amount: Points.make(75),
  balanceAfter: PointsBalance.make(25),
  referenceId: otherReferenceId,
  at: epoch,
})
const otherRefunded = (balanceAfter: number) =>
  Ledger.OrderRefunded.make({
    transactionId: refundTransactionId,
    accountId,
    userId,
    orderId: otherOrderId,
    amount: Points.make(75),
    balanceAfter: PointsBalance.make(balanceAfter),
    referenceId: otherReferenceId,
    at: epoch,
  })

/** The defect an Effect died with, for workflows that must break an invariant. */
const defectOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.exit(effect), (exit) => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined))

const ledgerOf = (...events: ReadonlyArray<Ledger.LedgerEvent>) => replay(Ledger.decider, events)
const orderOf = (...events: ReadonlyArray<Order.OrderEvent>) => replay(Order.decider, events)
const userOf = (...events: ReadonlyArray<User.UserEvent>) => replay(User.decider, events)

describe("Placing an order", () => {
  const placeFor = (holder: User.UserStanding, ledger: Ledger.LedgerState) =>
    Workflows.placeOrder({ holder, ledger, order: Order.decider.initialState }, place)

  it.effect("places the order and debits its total from the buyer's account", () =>
    Effect.gen(function* () {
      const outcome = yield* placeFor("active", ledgerOf(opened, added))
      expect(outcome).toEqual({ order: [placed], ledger: [debited] })
    }),
  )

  it.effect(
    "refuses a buyer who is unknown (LE0002), being processed (LE0001), or closed (LE2001: no account)",
    () =>
      Effect.gen(function* () {
        const ledger = ledgerOf(opened, added)
        expect(yield* Effect.flip(placeFor("unregistered", ledger))).toEqual(
          new ResourceNotFound({ resource: "user", id: userId }),
        )
        expect(yield* Effect.flip(placeFor("processing", ledger))).toEqual(new UserBeingProcessed({ userId }))
        expect(yield* Effect.flip(placeFor("closed", ledger))).toEqual(new NoPointsAccount({ userId }))
      }),
  )

  it.effect("refuses a buyer without a points account (LE2001) or without enough points (LE2002)", () =>
    Effect.gen(function* () {
      expect(yield* Effect.flip(placeFor("active", Ledger.decider.initialState))).toEqual(
        new NoPointsAccount({ userId }),
      )
      expect(yield* Effect.flip(placeFor("active", ledgerOf(opened)))).toEqual(
        new InsufficientPoints({ balance: 0, requested: 400 }),
      )
    }),
  )
})

describe("Cancelling an order", () => {
  const input = { orderId, refundTransactionId }

  it.effect("cancels a pending order and refunds its points", () =>
    Effect.gen(function* () {
      const outcome = yield* Workflows.cancelOrder(
        { ledger: ledgerOf(opened, added, debited), order: orderOf(placed) },
        input,
      )
      expect(outcome).toEqual({ order: [cancelled], ledger: [refunded] })
    }),
  )

  it.effect("refunds the order's own total and reference id, not another order's", () =>
    Effect.gen(function* () {
      const outcome = yield* Workflows.cancelOrder(
        { ledger: ledgerOf(opened, added, debited, otherDebited), order: orderOf(otherPlaced) },
        { orderId: otherOrderId, refundTransactionId },
      )
      expect(outcome).toEqual({
        order: [Order.OrderCancelled.make({ orderId: otherOrderId, at: epoch })],
        ledger: [otherRefunded(100)],
      })
    }),
  )

  it.effect("refunds even when the buyer's account has closed since", () =>
    Effect.gen(function* () {
      const outcome = yield* Workflows.cancelOrder(
        { ledger: ledgerOf(opened, added, debited, accountClosed), order: orderOf(placed) },
        input,
      )
      expect(outcome).toEqual({ order: [cancelled], ledger: [refunded] })
    }),
  )

  it.effect("refuses an order past pending (LE3001) and an unknown order (LE0002), refunding nothing", () =>
    Effect.gen(function* () {
      const ledger = ledgerOf(opened, added, debited)
      expect(
        yield* Effect.flip(Workflows.cancelOrder({ ledger, order: orderOf(placed, processing) }, input)),
      ).toEqual(new IllegalOrderTransition({ orderId, from: "processing", to: "cancelled" }))
      expect(
        yield* Effect.flip(Workflows.cancelOrder({ ledger, order: Order.decider.initialState }, input)),
      ).toEqual(new ResourceNotFound({ resource: "order", id: orderId }))
    }),
  )

  it.effect(
    "refunds an order at most once: a cancelled order is neither cancelled nor failed again (LE3001)",
    () =>
      Effect.gen(function* () {
        const state = {
          ledger: ledgerOf(opened, added, debited, refunded),
          order: orderOf(placed, cancelled),
        }
        expect(yield* Effect.flip(Workflows.cancelOrder(state, input))).toEqual(
          new IllegalOrderTransition({ orderId, from: "cancelled", to: "cancelled" }),
        )
        expect(yield* Effect.flip(Workflows.failOrder(state, { ...input, reason }))).toEqual(
          new IllegalOrderTransition({ orderId, from: "cancelled", to: "failed" }),
        )
      }),
  )

  it.effect("treats cancelling an order the buyer's account never paid for as a bug", () =>
    Effect.gen(function* () {
      const defect = yield* defectOf(
        Workflows.cancelOrder({ ledger: ledgerOf(opened, added), order: orderOf(placed) }, input),
      )
      expect(defect).toBeInstanceOf(InvariantViolation)
      expect(String(defect)).toContain("a refund larger than the outstanding order debits")
    }),
  )
})

describe("Failing an order", () => {
  const input = { orderId, reason, refundTransactionId }

  it.effect(
    "checks its input when the effect runs: an over-long reason is a defect of the effect, not a throw",
    () =>
      Effect.gen(function* () {
        const state = { ledger: ledgerOf(opened, added, debited), order: orderOf(placed, processing) }
        // Calling it must not throw: a caller that runs the effect sees the failure where it handles failures.
        const failing = Workflows.failOrder(state, { ...input, reason: "x".repeat(1001) })
        const defect = yield* defectOf(failing)
        expect(String(defect)).toContain('["reason"]')
        expect(String(defect)).toContain("must be at most 1000 characters")
        expect(yield* Workflows.failOrder(state, input)).toEqual({ order: [failed], ledger: [refunded] })
      }),
  )

  it.effect("fails a processing order and refunds its points", () =>
    Effect.gen(function* () {
      const outcome = yield* Workflows.failOrder(
        { ledger: ledgerOf(opened, added, debited), order: orderOf(placed, processing) },
        input,
      )
      expect(outcome).toEqual({ order: [failed], ledger: [refunded] })
    }),
  )

  it.effect("refunds the order's own total and reference id, not another order's", () =>
    Effect.gen(function* () {
      const outcome = yield* Workflows.failOrder(
        {
          ledger: ledgerOf(opened, added, debited, otherDebited),
          order: orderOf(
            otherPlaced,
            Order.OrderProcessingStarted.make({ orderId: otherOrderId, at: epoch }),
          ),
        },
        { orderId: otherOrderId, reason, refundTransactionId },
      )
      expect(outcome).toEqual({
        order: [Order.OrderFailed.make({ orderId: otherOrderId, reason, at: epoch })],
        ledger: [otherRefunded(100)],
      })
    }),
  )

  it.effect("does nothing, and refunds nothing, when the failure is redelivered", () =>
    Effect.gen(function* () {
      // Another order's debit is still outstanding, so a second refund would not even break an invariant.
      const outcome = yield* Workflows.failOrder(
        {
          ledger: ledgerOf(
            opened,
            added,
            debited,
            otherDebited,
            Ledger.OrderRefunded.make({ ...refunded, balanceAfter: PointsBalance.make(425) }),
          ),
          order: orderOf(placed, processing, failed),
        },
        input,
      )
      expect(outcome).toEqual({ order: [], ledger: [] })
    }),
  )

  it.effect("refuses failing an order that is not processing (LE3001)", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Workflows.failOrder({ ledger: ledgerOf(opened, added, debited), order: orderOf(placed) }, input),
      )
      expect(error).toEqual(new IllegalOrderTransition({ orderId, from: "pending", to: "failed" }))
    }),
  )
})

describe("Opening a user's points account", () => {
  const open = { _tag: "OpenAccount", userId, accountId } as const
  const add = {
    _tag: "AddPoints",
    userId,
    accountId,
    transactionId: addTransactionId,
    amount: Points.make(500),
    referenceId,
    description: null,
  } as const

  it.effect("names the account on the user when it opens, explicitly or by the first Add points", () =>
    Effect.gen(function* () {
      const user = userOf(registered, activated)
      const explicit = yield* Workflows.openAccountForUser({ user, ledger: ledgerOf() }, open)
      expect(explicit.ledger.map((event) => event._tag)).toEqual(["AccountOpened"])
      // The user changed when the account opened, at the same moment.
      expect(explicit.user).toEqual([
        User.PointsAccountLinked.make({ userId, accountId, at: explicit.ledger[0]?.at ?? epoch }),
      ])
      const implicit = yield* Workflows.openAccountForUser({ user, ledger: ledgerOf() }, add)
      expect(implicit.ledger.map((event) => event._tag)).toEqual(["AccountOpened", "PointsAdded"])
      expect(implicit.user.map((event) => event._tag)).toEqual(["PointsAccountLinked"])
    }),
  )

  it.effect("leaves the user alone when the account exists, and refuses for the user's own standing", () =>
    Effect.gen(function* () {
      const user = userOf(registered, activated)
      const again = yield* Workflows.openAccountForUser({ user, ledger: ledgerOf(opened) }, add)
      expect(again.user).toEqual([])
      expect(again.ledger.map((event) => event._tag)).toEqual(["PointsAdded"])
      // The holder's standing is the user's own: processing (LE0001), closed (LE0004), unknown (LE0002).
      for (const [history, refusal] of [
        [[registered], new UserBeingProcessed({ userId })],
        [[registered, activated, userClosed], new AlreadyClosed({ resource: "user", id: userId })],
        [[], new ResourceNotFound({ resource: "user", id: userId })],
      ] as const) {
        const refused = yield* Effect.flip(
          Workflows.openAccountForUser({ user: userOf(...history), ledger: ledgerOf() }, open),
        )
        expect(refused).toEqual(refusal)
      }
    }),
  )
})

describe("Closing a user", () => {
  it.effect("closes the user and their points account together", () =>
    Effect.gen(function* () {
      const outcome = yield* Workflows.closeUser(
        { user: userOf(registered, activated), ledger: ledgerOf(opened, added) },
        { userId },
      )
      expect(outcome).toEqual({ user: [userClosed], ledger: [accountClosed] })
    }),
  )

  it.effect("closes a user who never had an account", () =>
    Effect.gen(function* () {
      const outcome = yield* Workflows.closeUser(
        { user: userOf(registered, activated), ledger: Ledger.decider.initialState },
        { userId },
      )
      expect(outcome).toEqual({ user: [userClosed], ledger: [] })
    }),
  )

  it.effect("refuses a user being processed (LE0001), closed (LE0004) or unknown (LE0002)", () =>
    Effect.gen(function* () {
      const ledger = Ledger.decider.initialState
      expect(
        yield* Effect.flip(Workflows.closeUser({ user: userOf(registered), ledger }, { userId })),
      ).toEqual(new UserBeingProcessed({ userId }))
      expect(
        yield* Effect.flip(
          Workflows.closeUser(
            { user: userOf(registered, activated, userClosed), ledger: ledgerOf(opened, accountClosed) },
            { userId },
          ),
        ),
      ).toEqual(new AlreadyClosed({ resource: "user", id: userId }))
      expect(yield* Effect.flip(Workflows.closeUser({ user: userOf(), ledger }, { userId }))).toEqual(
        new ResourceNotFound({ resource: "user", id: userId }),
      )
    }),
  )
})

// A clock that moves on by a millisecond every time it is read, as a real one does between two decisions.
const tickingClock = (): Clock.Clock => {
  let millis = 1_700_000_000_000
  const next = () => millis++
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: next,
    currentTimeMillis: Effect.sync(next),
    unsafeCurrentTimeNanos: () => BigInt(next()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(next()) * 1_000_000n),
    sleep: (duration: Duration.Duration) => Effect.dieMessage(`slept ${Duration.format(duration)}`),
  }
}

const timesOf = (events: ReadonlyArray<{ readonly at: DateTime.Utc }>) =>
  events.map((event) => DateTime.toEpochMillis(event.at))

describe("One transaction, one time", () => {
  it.effect("an order and its debit, an ended order and its refund, a closed user and account", () =>
    Effect.gen(function* () {
      const placing = yield* Workflows.placeOrder(
        { holder: "active", ledger: ledgerOf(opened, added), order: Order.decider.initialState },
        place,
      )
      const cancelling = yield* Workflows.cancelOrder(
        { ledger: ledgerOf(opened, added, debited), order: orderOf(placed) },
        { orderId, refundTransactionId },
      )
      const failing = yield* Workflows.failOrder(
        { ledger: ledgerOf(opened, added, debited), order: orderOf(placed, processing) },
        { orderId, reason, refundTransactionId },
      )
      const closing = yield* Workflows.closeUser(
        { user: userOf(registered, activated), ledger: ledgerOf(opened, added) },
        { userId },
      )
      for (const outcome of [placing, cancelling, failing]) {
        expect(timesOf(outcome.ledger)).toEqual(timesOf(outcome.order))
      }
      expect(timesOf(closing.ledger)).toEqual(timesOf(closing.user))
      // The clock did move: each workflow read it at its own time.
      expect(new Set([placing, cancelling, failing, closing].map((o) => timesOf(o.ledger)[0])).size).toBe(4)
    }).pipe(Effect.withClock(tickingClock())),
  )
})

describe("A write with a partner's reference id", () => {
  const reserve = (recordId: TransactionId = addTransactionId) =>
    Reference.ReserveReference.make({ partnerId, kind: "transaction", referenceId, recordId })
  const add = (user: User.UserState, ledger: Ledger.LedgerState) =>
    Workflows.openAccountForUser(
      { user, ledger },
      {
        _tag: "AddPoints",
        userId,
        transactionId: addTransactionId,
        accountId,
        amount: Points.make(50),
        referenceId,
        description: null,
      },
    )

  it.effect("reserves the reference id and decides the write, every event at the write's one time", () =>
    Effect.gen(function* () {
      const written = yield* Workflows.reservingReference(
        reserve(),
        Reference.decider.initialState,
        add(userOf(registered, activated), Ledger.decider.initialState),
      )
      expect(written.reference.map((event) => event._tag)).toEqual(["ReferenceReserved"])
      expect(written.ledger.map((event) => event._tag)).toEqual(["AccountOpened", "PointsAdded"])
      expect(written.user.map((event) => event._tag)).toEqual(["PointsAccountLinked"])
      const times = new Set([
        ...timesOf(written.reference),
        ...timesOf(written.ledger),
        ...timesOf(written.user),
      ])
      expect(times.size).toBe(1)
    }).pipe(Effect.withClock(tickingClock())),
  )

  it.effect("is LE0006 for a reference id already taken, whatever the write would have answered", () =>
    Effect.gen(function* () {
      const taken = replay(Reference.decider, [
        Reference.ReferenceReserved.make({
          partnerId,
          kind: "transaction",
          referenceId,
          recordId: otherTransactionId,
          at: epoch,
        }),
      ])
      const duplicate = new DuplicateReferenceId({ kind: "transaction", referenceId })
      // The user was closed since the first write: a retry still learns its reference id was used.
      const closedUser = userOf(registered, activated, userClosed)
      expect(
        yield* Effect.flip(
          Workflows.reservingReference(reserve(), taken, add(closedUser, Ledger.decider.initialState)),
        ),
      ).toEqual(duplicate)
      expect(
        yield* Effect.flip(
          Workflows.reservingReference(
            reserve(),
            taken,
            add(userOf(registered, activated), Ledger.decider.initialState),
          ),
        ),
      ).toEqual(duplicate)
    }),
  )

  it.effect("refuses as the write refuses when the reference id is free, reserving nothing", () =>
    Effect.gen(function* () {
      const refused = yield* Effect.flip(
        Workflows.reservingReference(
          reserve(),
          Reference.decider.initialState,
          add(userOf(registered), Ledger.decider.initialState),
        ),
      )
      expect(refused).toEqual(new UserBeingProcessed({ userId }))
    }),
  )
})

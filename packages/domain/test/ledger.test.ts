import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, TestClock } from "effect"
import {
  AlreadyClosed,
  InsufficientPoints,
  InvariantViolation,
  Ledger,
  NoPointsAccount,
  Points,
  PointsAccountConflict,
  PointsBalance,
  ResourceNotFound,
  type User,
  UserBeingProcessed,
} from "../src/index.js"
import { DeciderSpecification, replay } from "../src/testing/index.js"
import { epoch, userId } from "./fixtures.js"
import {
  accountId,
  addTransactionId,
  debitTransactionId,
  orderId,
  orderReferenceId,
  otherAccountId,
  otherOrderId,
  otherTransactionId,
  referenceId,
  refundTransactionId,
  subtractTransactionId,
} from "./ledger-fixtures.js"

const spec = DeciderSpecification.for(Ledger.decider)
const points = (n: number) => Points.make(n)
const balance = (n: number) => PointsBalance.make(n)

const opened = Ledger.AccountOpened.make({ accountId, userId, at: epoch })
const closed = Ledger.AccountClosed.make({ accountId, userId, at: epoch })
const added = (amount: number, after: number) =>
  Ledger.PointsAdded.make({
    transactionId: addTransactionId,
    accountId,
    userId,
    amount: points(amount),
    balanceAfter: balance(after),
    referenceId,
    description: "welcome bonus",
    at: epoch,
  })
const subtracted = (amount: number, after: number) =>
  Ledger.PointsSubtracted.make({
    transactionId: subtractTransactionId,
    accountId,
    userId,
    amount: points(amount),
    balanceAfter: balance(after),
    referenceId,
    description: null,
    at: epoch,
  })
const debited = (amount: number, after: number, order = orderId) =>
  Ledger.OrderDebited.make({
    transactionId: debitTransactionId,
    accountId,
    userId,
    orderId: order,
    amount: points(amount),
    balanceAfter: balance(after),
    referenceId: orderReferenceId,
    at: epoch,
  })
const refunded = (amount: number, after: number, order = orderId) =>
  Ledger.OrderRefunded.make({
    transactionId: refundTransactionId,
    accountId,
    userId,
    orderId: order,
    amount: points(amount),
    balanceAfter: balance(after),
    referenceId: orderReferenceId,
    at: epoch,
  })

const open = (holder: User.UserStanding = "active") => Ledger.OpenAccount.make({ userId, accountId, holder })
const add = (amount: number, holder: User.UserStanding = "active") =>
  Ledger.AddPoints.make({
    userId,
    accountId,
    transactionId: addTransactionId,
    amount: points(amount),
    referenceId,
    description: "welcome bonus",
    holder,
  })
const subtract = (amount: number, holder: User.UserStanding = "active") =>
  Ledger.SubtractPoints.make({
    userId,
    transactionId: subtractTransactionId,
    amount: points(amount),
    referenceId,
    description: null,
    holder,
  })
const debit = (amount: number, holder: User.UserStanding = "active", order = orderId) =>
  Ledger.DebitForOrder.make({
    userId,
    orderId: order,
    transactionId: debitTransactionId,
    amount: points(amount),
    referenceId: orderReferenceId,
    holder,
  })
const refund = (amount: number, order = orderId) =>
  Ledger.RefundOrder.make({
    userId,
    orderId: order,
    transactionId: refundTransactionId,
    amount: points(amount),
    referenceId: orderReferenceId,
  })
const close = Ledger.CloseAccount.make({ userId })

describe("Points account: opening", () => {
  it.effect("opens an account for an active user, stamped with the clock", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust(Duration.seconds(7))
      yield* spec
        .given([])
        .when(open())
        .then([Ledger.AccountOpened.make({ accountId, userId, at: DateTime.unsafeMake(7000) })])
    }),
  )

  it.effect("refuses a second account, whether the first is open or closed (LE1001)", () =>
    Effect.gen(function* () {
      const conflict = new PointsAccountConflict({ reason: "AccountAlreadyOpen" })
      yield* spec.given([opened]).when(open()).thenFails(conflict)
      yield* spec.given([opened, closed]).when(open()).thenFails(conflict)
    }),
  )

  it.effect("refuses opening for an unknown (LE0002), processing (LE0001) or closed (LE0004) user", () =>
    Effect.gen(function* () {
      yield* spec
        .given([])
        .when(open("unregistered"))
        .thenFails(new ResourceNotFound({ resource: "user", id: userId }))
      yield* spec.given([]).when(open("processing")).thenFails(new UserBeingProcessed({ userId }))
      yield* spec
        .given([])
        .when(open("closed"))
        .thenFails(new AlreadyClosed({ resource: "user", id: userId }))
    }),
  )
})

describe("Points account: adding points", () => {
  it.effect("opens the account implicitly on the first add, with the command's account id", () =>
    spec
      .given([])
      .when(add(100))
      .then([opened, added(100, 100)]),
  )

  it.effect("adds to an open account, keeping its own account id", () =>
    spec
      .given([opened, added(100, 100)])
      .when(Ledger.AddPoints.make({ ...add(50), accountId: otherAccountId }))
      .then([added(50, 150)]),
  )

  it.effect("refuses adding to a closed account (LE0004)", () =>
    spec
      .given([opened, closed])
      .when(add(10))
      .thenFails(new AlreadyClosed({ resource: "points account", id: accountId })),
  )

  it.effect("refuses adding for an unknown (LE0002), processing (LE0001) or closed (LE0004) user", () =>
    Effect.gen(function* () {
      yield* spec
        .given([])
        .when(add(10, "unregistered"))
        .thenFails(new ResourceNotFound({ resource: "user", id: userId }))
      yield* spec.given([opened]).when(add(10, "processing")).thenFails(new UserBeingProcessed({ userId }))
      yield* spec
        .given([opened, closed])
        .when(add(10, "closed"))
        .thenFails(new AlreadyClosed({ resource: "user", id: userId }))
    }),
  )
})

describe("Points account: subtracting points", () => {
  it.effect("subtracts down to exactly zero", () =>
    spec
      .given([opened, added(100, 100)])
      .when(subtract(100))
      .then([subtracted(100, 0)]),
  )

  it.effect("never goes below zero (LE2002)", () =>
    spec
      .given([opened, added(100, 100)])
      .when(subtract(101))
      .thenFails(new InsufficientPoints({ balance: 100, requested: 101 })),
  )

  it.effect("refuses without an account, or with a closed one (LE2001)", () =>
    Effect.gen(function* () {
      yield* spec.given([]).when(subtract(1)).thenFails(new NoPointsAccount({ userId }))
      yield* spec
        .given([opened, added(100, 100), closed])
        .when(subtract(1))
        .thenFails(new NoPointsAccount({ userId }))
    }),
  )

  it.effect("checks the holder first (LE0002, LE0001, LE0004)", () =>
    Effect.gen(function* () {
      yield* spec
        .given([])
        .when(subtract(1, "unregistered"))
        .thenFails(new ResourceNotFound({ resource: "user", id: userId }))
      yield* spec
        .given([opened])
        .when(subtract(1, "processing"))
        .thenFails(new UserBeingProcessed({ userId }))
      yield* spec.given([opened]).when(subtract(1, "closed")).thenFails(new NoPointsAccount({ userId }))
    }),
  )
})

describe("Points account: paying for orders", () => {
  it.effect("debits an order's total", () =>
    spec
      .given([opened, added(100, 100)])
      .when(debit(60))
      .then([debited(60, 40)]),
  )

  it.effect("debits another order while earlier order debits are outstanding", () =>
    spec
      .given([opened, added(100, 100), debited(60, 40)])
      .when(debit(30, "active", otherOrderId))
      .then([debited(30, 10, otherOrderId)]),
  )

  it.effect("refuses a debit above the balance (LE2002) or without an open account (LE2001)", () =>
    Effect.gen(function* () {
      yield* spec
        .given([opened, added(100, 100)])
        .when(debit(101))
        .thenFails(new InsufficientPoints({ balance: 100, requested: 101 }))
      yield* spec.given([]).when(debit(1)).thenFails(new NoPointsAccount({ userId }))
      yield* spec
        .given([opened, added(100, 100), closed])
        .when(debit(1))
        .thenFails(new NoPointsAccount({ userId }))
    }),
  )

  it.effect("checks the holder of a new debit (LE0002, LE0001, LE0004)", () =>
    Effect.gen(function* () {
      const history = [opened, added(100, 100)]
      yield* spec
        .given(history)
        .when(debit(1, "unregistered"))
        .thenFails(new ResourceNotFound({ resource: "user", id: userId }))
      yield* spec.given(history).when(debit(1, "processing")).thenFails(new UserBeingProcessed({ userId }))
      yield* spec.given(history).when(debit(1, "closed")).thenFails(new NoPointsAccount({ userId }))
    }),
  )

  it.effect("refunds the amount and reference id the order states", () =>
    Effect.gen(function* () {
      yield* spec
        .given([opened, added(100, 100), debited(60, 40)])
        .when(refund(60))
        .then([refunded(60, 100)])
      yield* spec
        .given([opened, added(100, 100), debited(60, 40), debited(10, 30, otherOrderId)])
        .when(refund(10, otherOrderId))
        .then([refunded(10, 40, otherOrderId)])
    }),
  )

  it.effect("refunds on a closed account too: the points of an order that did not happen go back", () =>
    spec
      .given([opened, added(100, 100), debited(60, 40), closed])
      .when(refund(60))
      .then([refunded(60, 100)]),
  )

  it.effect("treats a refund without an account as a bug (a defect, not a refusal)", () =>
    spec.given([]).when(refund(60)).thenBreaksInvariant("without an account"),
  )

  it.effect("treats a refund larger than the outstanding order debits as a bug", () =>
    Effect.gen(function* () {
      const larger = "a refund larger than the outstanding order debits"
      yield* spec
        .given([opened, added(100, 100)])
        .when(refund(1))
        .thenBreaksInvariant(larger)
      yield* spec
        .given([opened, added(100, 100), debited(60, 40)])
        .when(refund(61))
        .thenBreaksInvariant(larger)
      yield* spec
        .given([opened, added(100, 100), debited(60, 40), refunded(60, 100)])
        .when(refund(60))
        .thenBreaksInvariant(larger)
      yield* spec
        .given([opened, added(100, 100), debited(60, 40), closed, refunded(60, 100)])
        .when(refund(60))
        .thenBreaksInvariant(larger)
    }),
  )
})

describe("Points account: closing", () => {
  it.effect("closes an open account", () => spec.given([opened]).when(close).then([closed]))

  it.effect("does nothing when there is no account or it is already closed", () =>
    Effect.gen(function* () {
      yield* spec.given([]).when(close).thenNothingHappens()
      yield* spec.given([opened, closed]).when(close).thenNothingHappens()
    }),
  )
})

describe("Points account state", () => {
  it("replays balance, version, timestamps and the order debits not refunded yet", () => {
    const later = DateTime.unsafeMake(1000)
    const state = replay(Ledger.decider, [
      opened,
      added(100, 100),
      debited(60, 40),
      Ledger.OrderDebited.make({ ...debited(10, 30, otherOrderId), transactionId: otherTransactionId }),
      Ledger.OrderRefunded.make({ ...refunded(60, 90), at: later }),
    ])
    expect(state._tag).toBe("Open")
    if (state._tag === "NoAccount") return
    expect(state.balance).toBe(90)
    expect(state.version).toBe(5)
    expect(state.createdAt).toBe(epoch)
    expect(state.updatedAt).toBe(later)
    expect(state.outstandingOrderDebits).toBe(10)
  })

  it("grows the outstanding order debits with each debit and shrinks them with each refund", () => {
    const outstanding = (...events: ReadonlyArray<Ledger.LedgerEvent>) => {
      const state = replay(Ledger.decider, events)
      return state._tag === "NoAccount" ? null : state.outstandingOrderDebits
    }
    const history = [opened, added(100, 100)]
    expect(outstanding(opened)).toBe(0)
    expect(outstanding(...history, subtracted(10, 90))).toBe(0)
    expect(outstanding(...history, debited(60, 40))).toBe(60)
    expect(outstanding(...history, debited(60, 40), debited(30, 10, otherOrderId))).toBe(90)
    expect(outstanding(...history, debited(60, 40), debited(30, 10, otherOrderId), refunded(60, 70))).toBe(30)
    expect(
      outstanding(
        ...history,
        debited(60, 40),
        debited(30, 10, otherOrderId),
        refunded(60, 70),
        refunded(30, 100, otherOrderId),
      ),
    ).toBe(0)
    // A closed account keeps its outstanding debits, and its refunds still pay them back.
    expect(outstanding(...history, debited(60, 40), closed)).toBe(60)
    const refundedAfterClosing = replay(Ledger.decider, [
      ...history,
      debited(60, 40),
      closed,
      refunded(60, 100),
    ])
    expect(refundedAfterClosing._tag).toBe("Closed")
    if (refundedAfterClosing._tag === "NoAccount") return
    expect(refundedAfterClosing.outstandingOrderDebits).toBe(0)
    expect(refundedAfterClosing.balance).toBe(100)
  })

  it("refuses to replay a stream that breaks the account's invariants", () => {
    const corrupt: ReadonlyArray<ReadonlyArray<Ledger.LedgerEvent>> = [
      [added(100, 100)],
      [opened, opened],
      [opened, added(100, 99)],
      [opened, added(100, 100), subtracted(10, 100)],
      [opened, closed, added(100, 100)],
      [opened, added(100, 100), refunded(10, 110)],
      [opened, added(100, 100), debited(10, 90), refunded(20, 110)],
      [opened, added(100, 100), debited(10, 90), refunded(10, 100), refunded(10, 110)],
      [opened, added(100, 100), closed, refunded(10, 110)],
      [opened, Ledger.PointsAdded.make({ ...added(100, 100), accountId: otherAccountId })],
      [opened, closed, closed],
    ]
    for (const stream of corrupt) expect(() => replay(Ledger.decider, stream)).toThrow(InvariantViolation)
  })
})

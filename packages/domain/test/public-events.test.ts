import { describe, expect, it } from "@effect/vitest"
import {
  AccountId,
  Email,
  Ledger,
  Order,
  OrderId,
  PartnerUserId,
  Points,
  PointsBalance,
  ReferenceId,
  Sku,
  TransactionId,
  User,
  WebhookEndpoint,
} from "../src/index.js"
import { epoch, partnerId, userId } from "./fixtures.js"

const { publicEventSubjectOf, publicEventTypes } = WebhookEndpoint
const at = epoch
const accountId = AccountId.make("01936b2e-0000-7000-8000-0000000000b1")
const transactionId = TransactionId.make("01936b2e-0000-7000-8000-0000000000c1")
const orderId = OrderId.make("01936b2e-0000-7000-8000-0000000000d1")
const referenceId = ReferenceId.make("ref-1")
const movement = { transactionId, accountId, userId, amount: Points.make(10), referenceId, at }

const registered = User.UserRegistered.make({
  userId,
  partnerId,
  partnerUserId: PartnerUserId.make("p-1"),
  email: Email.make("ada@example.com"),
  name: null,
  at,
})
const placed = Order.OrderPlaced.make({
  orderId,
  userId,
  referenceId,
  items: [{ sku: Sku.make("A"), name: null, quantity: 1, points: Points.make(10) }],
  totalPoints: Points.make(10),
  debitTransactionId: transactionId,
  at,
})

describe("the mapping from domain events to public events", () => {
  it("announces a registration as user.created, carrying the user", () => {
    expect(publicEventSubjectOf(registered)).toEqual({
      type: "user.created",
      resource: "user",
      resourceId: userId,
    })
  })

  it("announces an activation as user.activated, carrying the user", () => {
    expect(publicEventSubjectOf(User.UserActivated.make({ userId, at }))).toEqual({
      type: "user.activated",
      resource: "user",
      resourceId: userId,
    })
  })

  it("announces a closing as user.closed, carrying the user", () => {
    expect(publicEventSubjectOf(User.UserClosed.make({ userId, at }))).toEqual({
      type: "user.closed",
      resource: "user",
      resourceId: userId,
    })
  })

  it("announces an add as points.added, carrying the transaction", () => {
    const added = Ledger.PointsAdded.make({
      ...movement,
      balanceAfter: PointsBalance.make(10),
      description: null,
    })
    expect(publicEventSubjectOf(added)).toEqual({
      type: "points.added",
      resource: "transaction",
      resourceId: transactionId,
    })
  })

  it("announces a subtract as points.subtracted, carrying the transaction", () => {
    const subtracted = Ledger.PointsSubtracted.make({
      ...movement,
      balanceAfter: PointsBalance.make(0),
      description: null,
    })
    expect(publicEventSubjectOf(subtracted)).toEqual({
      type: "points.subtracted",
      resource: "transaction",
      resourceId: transactionId,
    })
  })

  it("announces a placed order as order.created, carrying the order", () => {
    expect(publicEventSubjectOf(placed)).toEqual({
      type: "order.created",
      resource: "order",
      resourceId: orderId,
    })
  })

  it("announces every later status change of an order as order.status_changed, carrying the order", () => {
    const changes: ReadonlyArray<Order.OrderEvent> = [
      Order.OrderProcessingStarted.make({ orderId, at }),
      Order.OrderCompleted.make({ orderId, at }),
      Order.OrderFailed.make({ orderId, reason: "out of stock", at }),
      Order.OrderCancelled.make({ orderId, at }),
    ]
    for (const change of changes) {
      expect(publicEventSubjectOf(change), change._tag).toEqual({
        type: "order.status_changed",
        resource: "order",
        resourceId: orderId,
      })
    }
  })

  it("announces nothing for detail changes, account openings and closings, and order debits and refunds", () => {
    const orderMovement = { ...movement, orderId, balanceAfter: PointsBalance.make(0) }
    const silent = [
      User.UserDetailsChanged.make({ userId, email: registered.email, name: "Ada", at }),
      Ledger.AccountOpened.make({ accountId, userId, at }),
      Ledger.AccountClosed.make({ accountId, userId, at }),
      Ledger.OrderDebited.make(orderMovement),
      Ledger.OrderRefunded.make(orderMovement),
    ]
    for (const event of silent) expect(publicEventSubjectOf(event), event._tag).toBeNull()
  })

  it("maps onto exactly the published types", () => {
    const announced = new Set(
      [
        registered,
        User.UserActivated.make({ userId, at }),
        User.UserClosed.make({ userId, at }),
        Ledger.PointsAdded.make({ ...movement, balanceAfter: PointsBalance.make(10), description: null }),
        Ledger.PointsSubtracted.make({ ...movement, balanceAfter: PointsBalance.make(0), description: null }),
        placed,
        Order.OrderCompleted.make({ orderId, at }),
      ].map((event) => publicEventSubjectOf(event)?.type),
    )
    expect([...announced].sort()).toEqual([...publicEventTypes].sort())
  })
})

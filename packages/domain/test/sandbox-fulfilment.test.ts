import { addEqualityTesters, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { IllegalOrderTransition, Ledger, Order, Points, PointsBalance, Sku, Workflows } from "../src/index.js"
import { replay } from "../src/testing/index.js"
import { epoch, userId } from "./fixtures.js"
import {
  accountId,
  addTransactionId,
  debitTransactionId,
  failingSku,
  orderId,
  orderReferenceId,
  referenceId,
  refundTransactionId,
  sku,
} from "./ledger-fixtures.js"

addEqualityTesters()

const line = (itemSku: Sku) => ({ sku: itemSku, name: null, quantity: 2, points: Points.make(100) })
const placedWith = (items: ReadonlyArray<Order.OrderItem>) =>
  Order.OrderPlaced.make({
    orderId,
    userId,
    referenceId: orderReferenceId,
    items,
    totalPoints: Points.make(200 * items.length),
    debitTransactionId,
    at: epoch,
  })
const processing = Order.OrderProcessingStarted.make({ orderId, at: epoch })
const opened = Ledger.AccountOpened.make({ accountId, userId, at: epoch })
const added = Ledger.PointsAdded.make({
  transactionId: addTransactionId,
  accountId,
  userId,
  amount: Points.make(1000),
  balanceAfter: PointsBalance.make(1000),
  referenceId,
  description: null,
  at: epoch,
})
const debited = (amount: number) =>
  Ledger.OrderDebited.make({
    transactionId: debitTransactionId,
    accountId,
    userId,
    orderId,
    amount: Points.make(amount),
    balanceAfter: PointsBalance.make(1000 - amount),
    referenceId: orderReferenceId,
    at: epoch,
  })

const input = { orderId, refundTransactionId }
const expectedReason = "item FAIL-1 cannot be fulfilled (sandbox: its sku starts with FAIL)"

describe("Order.sandboxFailureOf", () => {
  it("names the first item whose sku starts with FAIL, case-sensitively", () => {
    expect(Order.sandboxFailureOf([line(sku), line(failingSku), line(Sku.make("FAIL-2"))])).toBe(
      expectedReason,
    )
    expect(Order.sandboxFailureOf([line(sku), line(Sku.make("fail-1")), line(Sku.make("X-FAIL"))])).toBeNull()
  })
})

describe("Finishing a sandbox fulfilment", () => {
  it.effect("completes a processing order whose items can all be delivered, refunding nothing", () =>
    Effect.gen(function* () {
      const placed = placedWith([line(sku)])
      const outcome = yield* Workflows.finishSandboxFulfilment(
        {
          order: replay(Order.decider, [placed, processing]),
          ledger: replay(Ledger.decider, [opened, added, debited(200)]),
        },
        input,
      )
      expect(outcome).toEqual({ order: [Order.OrderCompleted.make({ orderId, at: epoch })], ledger: [] })
    }),
  )

  it.effect("fails an order holding a FAIL sku and refunds exactly its total", () =>
    Effect.gen(function* () {
      const placed = placedWith([line(sku), line(failingSku)])
      const outcome = yield* Workflows.finishSandboxFulfilment(
        {
          order: replay(Order.decider, [placed, processing]),
          ledger: replay(Ledger.decider, [opened, added, debited(400)]),
        },
        input,
      )
      expect(outcome).toEqual({
        order: [Order.OrderFailed.make({ orderId, reason: expectedReason, at: epoch })],
        ledger: [
          Ledger.OrderRefunded.make({
            transactionId: refundTransactionId,
            accountId,
            userId,
            orderId,
            amount: Points.make(400),
            balanceAfter: PointsBalance.make(1000),
            referenceId: orderReferenceId,
            at: epoch,
          }),
        ],
      })
    }),
  )

  it.effect("appends and refunds nothing when redelivered after either ending", () =>
    Effect.gen(function* () {
      const completedOrder = placedWith([line(sku)])
      const completed = yield* Workflows.finishSandboxFulfilment(
        {
          order: replay(Order.decider, [
            completedOrder,
            processing,
            Order.OrderCompleted.make({ orderId, at: epoch }),
          ]),
          ledger: replay(Ledger.decider, [opened, added, debited(200)]),
        },
        input,
      )
      expect(completed).toEqual({ order: [], ledger: [] })
      const failedOrder = placedWith([line(failingSku)])
      const failed = yield* Workflows.finishSandboxFulfilment(
        {
          order: replay(Order.decider, [
            failedOrder,
            processing,
            Order.OrderFailed.make({ orderId, reason: expectedReason, at: epoch }),
          ]),
          ledger: replay(Ledger.decider, [opened, added, debited(200)]),
        },
        input,
      )
      expect(failed).toEqual({ order: [], ledger: [] })
    }),
  )

  it.effect("refuses to finish an order that was never picked up (LE3001)", () =>
    Effect.gen(function* () {
      const order = replay(Order.decider, [placedWith([line(sku)])])
      const ledger = replay(Ledger.decider, [opened, added, debited(200)])
      expect(yield* Effect.flip(Workflows.finishSandboxFulfilment({ order, ledger }, input))).toEqual(
        new IllegalOrderTransition({ orderId, from: "pending", to: "completed" }),
      )
    }),
  )
})

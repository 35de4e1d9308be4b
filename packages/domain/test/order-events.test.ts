import { describe, expect, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import { MAX_POINTS, Order, Points } from "../src/index.js"
import { checkCatalogRoundTrip } from "../src/testing/index.js"
import { epoch, userId } from "./fixtures.js"
import { debitTransactionId, orderId, orderReferenceId, sku } from "./ledger-fixtures.js"

const item = (quantity: number, points: number): Order.OrderItem => ({
  sku,
  name: null,
  quantity,
  points: Points.make(points),
})
const problemOf = (input: unknown): string | undefined => {
  const result = Schema.decodeUnknownEither(Order.OrderItems)(input)
  return Either.isLeft(result) ? ParseResult.TreeFormatter.formatErrorSync(result.left) : undefined
}

describe("Order events in the store", () => {
  it.effect("round-trip through encode and decode", () => checkCatalogRoundTrip(Order.orderEvents))

  it("each leave the order in one status", () => {
    const orderEvents: ReadonlyArray<Order.OrderEvent> = [
      Order.OrderPlaced.make({
        orderId,
        userId,
        referenceId: orderReferenceId,
        items: [item(1, 1)],
        totalPoints: Points.make(1),
        debitTransactionId,
        at: epoch,
      }),
      Order.OrderProcessingStarted.make({ orderId, at: epoch }),
      Order.OrderCompleted.make({ orderId, at: epoch }),
      Order.OrderFailed.make({ orderId, reason: "out of stock", at: epoch }),
      Order.OrderCancelled.make({ orderId, at: epoch }),
    ]
    expect(orderEvents.map((event) => [event._tag, Order.statusAfter(event)])).toEqual([
      ["OrderPlaced", "pending"],
      ["OrderProcessingStarted", "processing"],
      ["OrderCompleted", "completed"],
      ["OrderFailed", "failed"],
      ["OrderCancelled", "cancelled"],
    ])
    expect(Order.orderEvents.types).toEqual(orderEvents.map((event) => event._tag))
  })
})

describe("Order items", () => {
  it("cost the sum of quantity * points", () => {
    expect(Order.totalPointsOf([item(3, 10), item(1, 5)])).toBe(35)
  })

  it("take 1..100 lines of quantity 1..1000", () => {
    expect(problemOf([item(1, 1)])).toBeUndefined()
    expect(problemOf(Array.from({ length: 100 }, () => item(1000, 1)))).toBeUndefined()
    expect(problemOf([])).toContain("must have at least 1 item")
    expect(problemOf(Array.from({ length: 101 }, () => item(1, 1)))).toContain("must have at most 100 items")
    expect(problemOf([item(0, 1)])).toContain("must be an integer between 1 and 1000")
    expect(problemOf([item(1001, 1)])).toContain("must be an integer between 1 and 1000")
    expect(problemOf([item(1.5, 1)])).toBeDefined()
  })

  it("cost at most MAX_POINTS in total, the most one debit can take", () => {
    expect(problemOf([item(1, MAX_POINTS)])).toBeUndefined()
    expect(problemOf([item(1, MAX_POINTS), item(1, 1)])).toContain(
      `must cost at most ${MAX_POINTS} points in total (the sum of quantity * points)`,
    )
    expect(problemOf([item(1000, MAX_POINTS)])).toContain("must cost at most")
  })

  it("refuse an order whose total is too large before any decider sees it", () => {
    expect(() =>
      Order.PlaceOrder.make({
        orderId,
        userId,
        referenceId: orderReferenceId,
        items: [item(2, MAX_POINTS)],
        debitTransactionId,
      }),
    ).toThrow(/must cost at most/)
  })
})

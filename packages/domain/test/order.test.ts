import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, TestClock } from "effect"
import { IllegalOrderTransition, InvariantViolation, Order, Points, ResourceNotFound } from "../src/index.js"
import { DeciderSpecification, replay } from "../src/testing/index.js"
import { epoch, userId } from "./fixtures.js"
import { debitTransactionId, orderId, orderReferenceId, otherOrderId, sku } from "./ledger-fixtures.js"

const spec = DeciderSpecification.for(Order.decider)
const items: ReadonlyArray<Order.OrderItem> = [
  { sku, name: "Mug", quantity: 2, points: Points.make(150) },
  { sku, name: null, quantity: 1, points: Points.make(100) },
]

const place = Order.PlaceOrder.make({
  orderId,
  userId,
  referenceId: orderReferenceId,
  items,
  debitTransactionId,
})
const startProcessing = Order.StartProcessing.make({ orderId })
const complete = Order.CompleteOrder.make({ orderId })
const fail = Order.FailOrder.make({ orderId, reason: "item FAIL-1 is out of stock" })
const cancel = Order.CancelOrder.make({ orderId })

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
const completed = Order.OrderCompleted.make({ orderId, at: epoch })
const failed = Order.OrderFailed.make({ orderId, reason: "item FAIL-1 is out of stock", at: epoch })
const cancelled = Order.OrderCancelled.make({ orderId, at: epoch })

/** The history that leaves an order in each status. */
const historyOf: { readonly [Status in Order.OrderStatus]: ReadonlyArray<Order.OrderEvent> } = {
  pending: [placed],
  processing: [placed, processing],
  completed: [placed, processing, completed],
  failed: [placed, processing, failed],
  cancelled: [placed, cancelled],
}

const illegal = (from: Order.OrderStatus, to: Order.OrderStatus) =>
  new IllegalOrderTransition({ orderId, from, to })

describe("Order: placing", () => {
  it.effect(
    "places a pending order whose total is the sum of quantity * points, stamped with the clock",
    () =>
      Effect.gen(function* () {
        yield* TestClock.adjust(Duration.seconds(3))
        yield* spec
          .given([])
          .when(place)
          .then([Order.OrderPlaced.make({ ...placed, at: DateTime.unsafeMake(3000) })])
      }),
  )

  it.effect("treats placing an order id twice as a bug (ids are fresh per request)", () =>
    spec.given([placed]).when(place).thenBreaksInvariant(),
  )

  it.effect(
    "refuses to fold a placed order whose total is not the sum of its lines (it debits and refunds it)",
    () =>
      spec
        .given([Order.OrderPlaced.make({ ...placed, totalPoints: Points.make(399) })])
        .when(cancel)
        .thenBreaksInvariant("a total not its lines' sum"),
  )
})

describe("Order: lifecycle", () => {
  it.effect("moves pending -> processing -> completed", () =>
    Effect.gen(function* () {
      yield* spec.given(historyOf.pending).when(startProcessing).then([processing])
      yield* spec.given(historyOf.processing).when(complete).then([completed])
    }),
  )

  it.effect("moves processing -> failed with the reason", () =>
    spec.given(historyOf.processing).when(fail).then([failed]),
  )

  it.effect("cancels a pending order", () => spec.given(historyOf.pending).when(cancel).then([cancelled]))

  it.effect("absorbs redelivered worker commands: each is a no-op once its status is reached", () =>
    Effect.gen(function* () {
      yield* spec.given(historyOf.processing).when(startProcessing).thenNothingHappens()
      yield* spec.given(historyOf.completed).when(complete).thenNothingHappens()
      yield* spec
        .given(historyOf.failed)
        .when(Order.FailOrder.make({ orderId, reason: "another reason" }))
        .thenNothingHappens()
    }),
  )

  it.effect("refuses cancelling anything but a pending order, a cancelled one included (LE3001)", () =>
    Effect.gen(function* () {
      for (const from of ["processing", "completed", "failed", "cancelled"] as const) {
        yield* spec.given(historyOf[from]).when(cancel).thenFails(illegal(from, "cancelled"))
      }
    }),
  )

  it.effect("refuses every other move the lifecycle does not allow (LE3001)", () =>
    Effect.gen(function* () {
      const refused: ReadonlyArray<[Order.OrderStatus, Order.OrderCommand, Order.OrderStatus]> = [
        ["completed", startProcessing, "processing"],
        ["failed", startProcessing, "processing"],
        ["cancelled", startProcessing, "processing"],
        ["pending", complete, "completed"],
        ["failed", complete, "completed"],
        ["cancelled", complete, "completed"],
        ["pending", fail, "failed"],
        ["completed", fail, "failed"],
        ["cancelled", fail, "failed"],
      ]
      for (const [from, command, to] of refused) {
        yield* spec.given(historyOf[from]).when(command).thenFails(illegal(from, to))
      }
    }),
  )

  it.effect("answers LE0002 for an order that does not exist", () =>
    Effect.gen(function* () {
      for (const command of [startProcessing, complete, fail, cancel]) {
        yield* spec
          .given([])
          .when(command)
          .thenFails(new ResourceNotFound({ resource: "order", id: orderId }))
      }
    }),
  )
})

describe("Order state", () => {
  it("allows exactly the published transitions", () => {
    const allowed = Order.OrderStatus.literals.flatMap((from) =>
      Order.OrderStatus.literals.filter((to) => Order.canTransition(from, to)).map((to) => `${from}->${to}`),
    )
    expect(allowed).toEqual([
      "pending->processing",
      "pending->cancelled",
      "processing->completed",
      "processing->failed",
    ])
  })

  it("replays status, history, failure reason, version and timestamps", () => {
    const at = (seconds: number) => DateTime.unsafeMake(seconds * 1000)
    const state = replay(Order.decider, [
      placed,
      Order.OrderProcessingStarted.make({ orderId, at: at(1) }),
      Order.OrderFailed.make({ orderId, reason: "out of stock", at: at(2) }),
    ])
    expect(state._tag).toBe("Placed")
    if (state._tag !== "Placed") return
    expect(state.status).toBe("failed")
    expect(state.failureReason).toBe("out of stock")
    expect(state.totalPoints).toBe(400)
    expect(state.version).toBe(3)
    expect(state.createdAt).toBe(epoch)
    expect(state.updatedAt).toEqual(at(2))
    expect(state.statusHistory).toEqual([
      { status: "pending", at: epoch },
      { status: "processing", at: at(1) },
      { status: "failed", at: at(2) },
    ])
  })

  it("refuses to replay a stream that breaks the lifecycle", () => {
    const corrupt: ReadonlyArray<ReadonlyArray<Order.OrderEvent>> = [
      [processing],
      [placed, placed],
      [placed, completed],
      [placed, cancelled, processing],
      [placed, processing, completed, failed],
      [placed, Order.OrderCancelled.make({ orderId: otherOrderId, at: epoch })],
    ]
    for (const stream of corrupt) expect(() => replay(Order.decider, stream)).toThrow(InvariantViolation)
  })
})

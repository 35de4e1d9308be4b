import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { cancelOrder, listTransactions, OrderFulfilmentLive, orderFulfilment } from "../../src/index.js"
import { newPartner, serviceDatabase } from "../services/service-fixtures.js"
import {
  awaitFinal,
  balanceOf,
  eventsOf,
  jobsOf,
  orderEventTypes,
  placeFor,
  pollUntil,
  refundsOf,
  TEST_DELAY,
  userWith,
} from "./fulfilment-fixtures.js"

// Live clock: the worker waits its delay in real time; every outcome is awaited with a deadline.
layer(serviceDatabase(), { excludeTestServices: true })("sandbox order fulfilment", (it) => {
  describe("with fulfilment running", () => {
    it.scoped("moves an order pending -> processing -> completed, every change an event", () =>
      Effect.gen(function* () {
        yield* Effect.forkScoped(orderFulfilment({ delay: TEST_DELAY, pollInterval: "200 millis" }))
        const context = yield* newPartner()
        const userId = yield* userWith(context, 1000)
        const placed = yield* placeFor(context, userId, [
          ["MUG", 2, 100],
          ["CAP", 1, 50],
        ])

        const done = yield* awaitFinal(context, placed.id)
        expect(done.status).toBe("completed")
        expect(done.failure_reason).toBeNull()
        expect(done.status_history.map((change) => change.status)).toEqual([
          "pending",
          "processing",
          "completed",
        ])
        const [pendingAt, processingAt, completedAt] = done.status_history.map((change) =>
          Date.parse(change.at),
        )
        // Pending (cancellable) for the delay, then processing for the delay.
        expect((processingAt as number) - (pendingAt as number)).toBeGreaterThanOrEqual(50)
        // Completed no earlier than the delay after it was picked up.
        expect((completedAt as number) - (processingAt as number)).toBeGreaterThanOrEqual(50)

        const events = yield* eventsOf(`order-${placed.id}`)
        expect(events.map((event) => event.event_type)).toEqual([
          "OrderPlaced",
          "OrderProcessingStarted",
          "OrderCompleted",
        ])
        // Each step is caused by the one before, in the conversation and under the request that placed it.
        const [placedEvent, started, completed] = events
        expect(started).toMatchObject({
          causation_id: placedEvent?.event_id,
          correlation_id: placedEvent?.event_id,
          request_id: placedEvent?.request_id,
          idempotency_key: null,
        })
        expect(completed).toMatchObject({
          causation_id: started?.event_id,
          correlation_id: placedEvent?.event_id,
          request_id: placedEvent?.request_id,
        })
        // The debit stands, nothing was refunded, and the job is finished.
        expect(yield* balanceOf(context, userId)).toBe(750)
        expect(yield* refundsOf(userId, placed.id)).toEqual([])
        expect(yield* jobsOf(placed.id)).toMatchObject([{ stage: "done", outcome: "completed", attempts: 0 }])
      }),
    )

    it.scoped("fails an order holding a FAIL sku and refunds exactly its points as an order_refund", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* userWith(context, 1000)
        const placed = yield* placeFor(context, userId, [
          ["MUG", 1, 100],
          ["FAIL-42", 3, 110],
        ])
        // Read before the worker starts: once it runs, the refund may come at any moment.
        expect(yield* balanceOf(context, userId)).toBe(570)
        yield* Effect.forkScoped(orderFulfilment({ delay: TEST_DELAY, pollInterval: "200 millis" }))

        const done = yield* awaitFinal(context, placed.id)
        expect(done.status).toBe("failed")
        expect(done.failure_reason).toBe(
          "item FAIL-42 cannot be fulfilled (sandbox: its sku starts with FAIL)",
        )
        expect(done.status_history.map((change) => change.status)).toEqual([
          "pending",
          "processing",
          "failed",
        ])
        expect(yield* orderEventTypes(placed.id)).toEqual([
          "OrderPlaced",
          "OrderProcessingStarted",
          "OrderFailed",
        ])

        // One refund, of the order's total, to the exact balance before the order.
        expect(yield* balanceOf(context, userId)).toBe(1000)
        expect(yield* refundsOf(userId, placed.id)).toHaveLength(1)
        const movements = yield* listTransactions(context, { user_id: userId }).pipe(Effect.orDie)
        expect(movements.data.map((transaction) => [transaction.type, transaction.amount])).toEqual([
          ["add", 1000],
          ["order_debit", 430],
          ["order_refund", 430],
        ])
        expect(movements.data[2]).toMatchObject({
          order_id: placed.id,
          balance_after: 1000,
          reference_id: placed.reference_id,
        })
        expect(yield* jobsOf(placed.id)).toMatchObject([{ stage: "done", outcome: "failed" }])
      }),
    )
  })

  it.scoped(
    "ends the job of an order cancelled before fulfilment with no event: the cancel's refund only",
    () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* userWith(context, 1000)
        const placed = yield* placeFor(context, userId, [["FAIL-1", 1, 300]])
        const cancelled = yield* cancelOrder(context, placed.id).pipe(Effect.orDie)
        expect(cancelled.status).toBe("cancelled")

        // Fulfilment starts after the cancel (through its layer, as an app would run it), and finds the job.
        yield* Layer.build(OrderFulfilmentLive({ delay: TEST_DELAY, pollInterval: "200 millis" }))
        const jobs = yield* pollUntil(
          jobsOf(placed.id).pipe(Effect.orDie),
          (rows) => rows[0]?.stage === "done",
        )
        expect(jobs).toMatchObject([{ stage: "done", outcome: "cancelled", attempts: 0 }])
        expect(yield* orderEventTypes(placed.id)).toEqual(["OrderPlaced", "OrderCancelled"])
        expect(yield* refundsOf(userId, placed.id)).toHaveLength(1)
        expect(yield* balanceOf(context, userId)).toBe(1000)
      }),
  )
})

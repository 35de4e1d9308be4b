import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { OrderId, UserId } from "@points/domain"
import { Effect, Fiber } from "effect"
import {
  advanceJob,
  type FulfilmentJob,
  orderFulfilment,
  orderStream,
  type RecordedEvent,
  type RequestContext,
  readStream,
  recordFulfilmentJobs,
  runFulfilmentWorker,
} from "../../src/index.js"
import { newId } from "../fixtures.js"
import { newPartner, serviceDatabase } from "../services/service-fixtures.js"
import {
  awaitFinal,
  awaitOrder,
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

/** The recorded events of an order's stream, as the consumer is handed them. */
const orderLog = (context: RequestContext, orderId: string) =>
  Effect.map(readStream(orderStream(orderId).streamId, context.partnerId).pipe(Effect.orDie), (read) => [
    ...read.events,
  ])

/** Hands events to the job-recording handler in a transaction, as one consumer batch. */
const deliver = (events: ReadonlyArray<RecordedEvent>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(recordFulfilmentJobs(TEST_DELAY)(events)))

/** A job as a worker would hold it at `stage`, for redelivering a step that already ran. */
const staleJob = (
  context: RequestContext,
  order: { readonly id: string; readonly user_id: string },
  stage: FulfilmentJob["stage"],
): FulfilmentJob => ({
  orderId: OrderId.make(order.id),
  partnerId: context.partnerId,
  userId: UserId.make(order.user_id),
  stage,
  requestId: null,
  correlationId: newId(),
  causationId: newId(),
  attempts: 0,
  due: true,
  dueInMillis: 0,
})

layer(serviceDatabase({ poolSize: 20 }), { excludeTestServices: true })(
  "sandbox fulfilment under faults",
  (it) => {
    describe("redelivery", () => {
      it.scoped("records one job per order however often an event is handled, and repeats no step", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const context = yield* newPartner()
          const userId = yield* userWith(context, 1000)
          const good = yield* placeFor(context, userId, [["MUG", 1, 100]])
          const bad = yield* placeFor(context, userId, [["FAIL-9", 1, 200]])
          const events = [...(yield* orderLog(context, good.id)), ...(yield* orderLog(context, bad.id))]

          // The consumer's batch handled twice (a redelivery after a rollback of its checkpoint): one job each.
          yield* deliver(events)
          yield* deliver(events)
          const jobRows = yield* sql<{ order_id: string; stage: string }>`
          SELECT order_id, stage FROM fulfilment_jobs WHERE order_id IN (${good.id}, ${bad.id}) ORDER BY order_id`
          expect(jobRows).toEqual(
            [good.id, bad.id].sort().map((orderId) => ({ order_id: orderId, stage: "pending" })),
          )

          yield* Effect.forkScoped(runFulfilmentWorker({ delay: TEST_DELAY, pollInterval: "200 millis" }))
          expect((yield* awaitFinal(context, good.id)).status).toBe("completed")
          expect((yield* awaitFinal(context, bad.id)).status).toBe("failed")
          const finished = [...(yield* jobsOf(good.id)), ...(yield* jobsOf(bad.id))]

          // Delivered again once done: the finished jobs are left as they are.
          yield* deliver(events)
          expect([...(yield* jobsOf(good.id)), ...(yield* jobsOf(bad.id))]).toEqual(finished)

          // Every step redelivered (a worker that read its job before the step committed): nothing appended,
          // nothing refunded twice, and the job ends with the order's status.
          for (const stage of ["pending", "processing"] as const) {
            for (const order of [good, bad]) {
              const outcome = yield* sql.withTransaction(
                advanceJob(staleJob(context, order, stage), TEST_DELAY),
              )
              expect(outcome).toEqual({ _tag: "Done", status: order === good ? "completed" : "failed" })
            }
          }
          expect(yield* orderEventTypes(good.id)).toEqual([
            "OrderPlaced",
            "OrderProcessingStarted",
            "OrderCompleted",
          ])
          expect(yield* orderEventTypes(bad.id)).toEqual([
            "OrderPlaced",
            "OrderProcessingStarted",
            "OrderFailed",
          ])
          expect(yield* refundsOf(userId, bad.id)).toHaveLength(1)
          expect(yield* balanceOf(context, userId)).toBe(900)
        }),
      )
    })

    it.scoped("completes an order after a restart in the middle, at the time first scheduled, once", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* userWith(context, 1000)
        // A long delay, so that the first worker is surely stopped between the two steps, even on a slow machine.
        const first = yield* Effect.forkScoped(
          orderFulfilment({ delay: "2 seconds", pollInterval: "200 millis" }),
        )
        const placed = yield* placeFor(context, userId)
        yield* awaitOrder(context, placed.id, (order) => order.status === "processing")
        yield* Fiber.interrupt(first)
        expect(yield* jobsOf(placed.id)).toMatchObject([{ stage: "processing", attempts: 0 }])
        expect(yield* orderEventTypes(placed.id)).toEqual(["OrderPlaced", "OrderProcessingStarted"])

        // A new process (another delay setting): the job's due time was stored with the first step.
        yield* Effect.forkScoped(orderFulfilment({ delay: TEST_DELAY, pollInterval: "200 millis" }))
        const done = yield* awaitFinal(context, placed.id)
        expect(done.status).toBe("completed")
        const [, processingAt, completedAt] = done.status_history.map((change) => Date.parse(change.at))
        expect((completedAt as number) - (processingAt as number)).toBeGreaterThanOrEqual(2000)
        expect(yield* orderEventTypes(placed.id)).toEqual([
          "OrderPlaced",
          "OrderProcessingStarted",
          "OrderCompleted",
        ])
        expect(yield* jobsOf(placed.id)).toMatchObject([{ stage: "done", outcome: "completed" }])
      }),
    )

    it.scoped("has two fulfilment processes at once make each transition exactly once", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const users = [yield* userWith(context, 100_000), yield* userWith(context, 100_000)]
        const orders = []
        for (let n = 0; n < 24; n++) {
          const userId = users[n % 2] as string
          orders.push(
            yield* placeFor(context, userId, [[n % 4 === 0 ? `FAIL-${n}` : `SKU-${n}`, 1, 100 + n]]),
          )
        }
        // Two "processes" (each the consumer and two worker loops) on one database; one consumer works.
        for (let n = 0; n < 2; n++) {
          yield* Effect.forkScoped(
            orderFulfilment({ delay: TEST_DELAY, pollInterval: "200 millis", concurrency: 2 }),
          )
        }
        const finals = yield* Effect.forEach(orders, (order) => awaitFinal(context, order.id, "30 seconds"))

        const kept: Record<string, number> = {}
        for (const [n, order] of orders.entries()) {
          const failing = n % 4 === 0
          expect(finals[n]?.status).toBe(failing ? "failed" : "completed")
          expect(yield* orderEventTypes(order.id)).toEqual([
            "OrderPlaced",
            "OrderProcessingStarted",
            failing ? "OrderFailed" : "OrderCompleted",
          ])
          expect(yield* refundsOf(order.user_id, order.id)).toHaveLength(failing ? 1 : 0)
          kept[order.user_id] = (kept[order.user_id] ?? 0) + (failing ? 0 : order.total_points)
        }
        for (const userId of users) {
          expect(yield* balanceOf(context, userId)).toBe(100_000 - (kept[userId] ?? 0))
        }
      }),
    )

    it.scoped("postpones a job whose step fails, without blocking the others or spinning", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const context = yield* newPartner()
        const userId = yield* userWith(context, 1000)
        // A job whose order does not exist: its pick-up finds no order, a bug the step dies of.
        const orphan = newId()
        yield* sql`
        INSERT INTO fulfilment_jobs (order_id, partner_id, user_id, stage, due_at, correlation_id, causation_id)
        VALUES (${orphan}, ${context.partnerId}, ${userId}, 'pending', now() - interval '1 minute', 'c', 'c')`
        yield* Effect.forkScoped(orderFulfilment({ delay: TEST_DELAY, pollInterval: "200 millis" }))
        const placed = yield* placeFor(context, userId)
        expect((yield* awaitFinal(context, placed.id)).status).toBe("completed")

        const [job] = yield* pollUntil(
          jobsOf(orphan).pipe(Effect.orDie),
          (rows) => (rows[0]?.attempts ?? 0) >= 1,
        )
        expect(job?.stage).toBe("pending")
        expect(job?.last_error).toContain(`found order ${orphan} not placed`)
        // Retried after 1 s, then 2 s: a handful of attempts at most, not a loop.
        expect(job?.attempts).toBeLessThanOrEqual(3)
        expect(yield* eventsOf(`order-${orphan}`)).toEqual([])
      }),
    )
  },
)

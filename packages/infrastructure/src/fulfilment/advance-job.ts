import { type Ledger, Order, TransactionId, Workflows } from "@points/domain"
import { type Duration, Effect } from "effect"
import type { Decision } from "../event-store/decide-and-append.js"
import { ledgerStream, orderStream } from "../event-store/stream-handle.js"
import { uuidV7 } from "../ids/uuid-v7.js"
import { runUnitOfWork } from "../services/run-unit-of-work.js"
import { appendContextOfJob, type FulfilmentJob } from "./fulfilment-job.js"
import { storeJobDone, storeJobProcessing } from "./store-job-stage.js"

/** What one step did to its order: picked it up, or ended the job with the order's final status. */
export type StepOutcome =
  | { readonly _tag: "Processing" }
  | { readonly _tag: "Done"; readonly status: "completed" | "failed" | "cancelled" }

const isFinal = (status: Order.OrderStatus): status is "completed" | "failed" | "cancelled" =>
  status === "completed" || status === "failed" || status === "cancelled"

/** Ends the job when its order reached a final status; anything else after a step is a bug. */
const endedOrDie = (job: FulfilmentJob, order: Order.OrderState) =>
  Effect.gen(function* () {
    if (order._tag === "Placed" && isFinal(order.status)) {
      yield* storeJobDone(job, order.status)
      return { _tag: "Done", status: order.status } as const
    }
    const status = order._tag === "Placed" ? order.status : "not placed"
    return yield* Effect.dieMessage(`fulfilment job at ${job.stage} found order ${job.orderId} ${status}`)
  })

/**
 * Picks a pending order up (pending -> processing) and schedules the job's last step `delay` later. An
 * order the partner cancelled meanwhile ends the job without an event.
 */
const pickUp = (job: FulfilmentJob, delay: Duration.Duration) =>
  Effect.gen(function* () {
    const { orderId } = job
    const outcome = yield* runUnitOfWork(
      { order: orderStream(orderId) },
      (s): Effect.Effect<Decision<{ order: ReturnType<typeof orderStream> }>, Order.OrderError> =>
        s.order._tag === "Placed" && s.order.status === "pending"
          ? Effect.map(Order.decide(Order.StartProcessing.make({ orderId }), s.order), (order) => ({ order }))
          : Effect.succeed({}),
      appendContextOfJob(job),
    )
    const order = outcome.states.order
    if (order._tag === "Placed" && order.status === "processing") {
      const started = outcome.appended.order[0]
      yield* storeJobProcessing(job, delay, started?.eventId ?? job.causationId)
      return { _tag: "Processing" } as const
    }
    return yield* endedOrDie(job, order)
  }).pipe(Effect.withSpan("fulfilment.pick-up", { attributes: { orderId: job.orderId } }))

/**
 * Ends a processing order as the sandbox does (Workflows.finishSandboxFulfilment): completed, or failed
 * with its points refunded to the buyer in the same unit of work (an `order_refund` transaction).
 */
const finish = (job: FulfilmentJob) =>
  Effect.gen(function* () {
    const { orderId } = job
    const streams = { order: orderStream(orderId), ledger: ledgerStream(job.userId) }
    const outcome = yield* runUnitOfWork(
      streams,
      (s): Effect.Effect<Decision<typeof streams>, Order.OrderError | Ledger.LedgerError> =>
        s.order._tag === "Placed" && s.order.status === "processing"
          ? Workflows.finishSandboxFulfilment(s, {
              orderId,
              refundTransactionId: TransactionId.make(uuidV7()),
            })
          : Effect.succeed({}),
      appendContextOfJob(job),
    )
    return yield* endedOrDie(job, outcome.states.order)
  }).pipe(Effect.withSpan("fulfilment.finish", { attributes: { orderId: job.orderId } }))

/**
 * Runs a locked job's next step: its order's events and the job's new stage in the caller's transaction,
 * so a crash between steps loses nothing and repeats nothing. A step whose order is no longer where the
 * job expects it (a redelivery, a cancel) appends nothing and ends the job.
 */
export const advanceJob = (job: FulfilmentJob, delay: Duration.Duration) =>
  job.stage === "pending" ? pickUp(job, delay) : finish(job)

import { OrderId, UserId } from "@points/domain"
import type { AppendContext } from "../event-store/recorded-event.js"

/** Where a job stands: waiting to pick its order up, waiting for the delay to end, or finished. */
export type FulfilmentStage = "pending" | "processing" | "done"

/** An unfinished fulfilment job, as a worker locked it. */
export interface FulfilmentJob {
  readonly orderId: OrderId
  readonly partnerId: string
  /** The buyer: a failed order's refund goes to their points account. */
  readonly userId: UserId
  readonly stage: Exclude<FulfilmentStage, "done">
  /** The request that placed the order, recorded with every event fulfilment appends. */
  readonly requestId: string | null
  readonly correlationId: string
  /** The event that caused the next step: OrderPlaced, then OrderProcessingStarted. */
  readonly causationId: string
  /** Failed attempts at the current step (reset when a step succeeds). */
  readonly attempts: number
  /** Whether it is due on the database's clock; if not, in how many milliseconds. */
  readonly due: boolean
  readonly dueInMillis: number
}

/** A `fulfilment_jobs` row as lockNextJob selects it. */
export interface FulfilmentJobRow {
  readonly order_id: string
  readonly partner_id: string
  readonly user_id: string
  readonly stage: "pending" | "processing"
  readonly request_id: string | null
  readonly correlation_id: string
  readonly causation_id: string
  readonly attempts: number
  readonly due: boolean
  readonly due_in_millis: number
}

/** The job of a row. */
export const jobOf = (row: FulfilmentJobRow): FulfilmentJob => ({
  orderId: OrderId.make(row.order_id),
  partnerId: row.partner_id,
  userId: UserId.make(row.user_id),
  stage: row.stage,
  requestId: row.request_id,
  correlationId: row.correlation_id,
  causationId: row.causation_id,
  attempts: row.attempts,
  due: row.due,
  dueInMillis: Number(row.due_in_millis),
})

/**
 * The metadata of the events a job's step appends: caused by the job's last event (the placing, then the
 * pick-up), in the conversation the order started, under the placing request's id; no idempotency key, as
 * no client request caused them.
 */
export const appendContextOfJob = (job: FulfilmentJob): AppendContext => ({
  partnerId: job.partnerId,
  requestId: job.requestId,
  idempotencyKey: null,
  causationId: job.causationId,
  correlationId: job.correlationId,
})

import { SqlClient } from "@effect/sql"
import type { Order } from "@points/domain"
import { Duration, Effect } from "effect"
import type { FulfilmentJob } from "./fulfilment-job.js"

/**
 * Moves a locked job to `processing`, due `delay` from now on the database's clock (the statement's time,
 * not the transaction's start, so never before `delay` after the pick-up event's time); `causationId` is
 * the event that picked the order up. Runs in the transaction that appended that event.
 */
export const storeJobProcessing = (job: FulfilmentJob, delay: Duration.Duration, causationId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      UPDATE fulfilment_jobs
      SET stage = 'processing', due_at = clock_timestamp() + ${Duration.toMillis(delay)} * interval '1 millisecond',
          causation_id = ${causationId}, attempts = 0, last_error = NULL, updated_at = now()
      WHERE order_id = ${job.orderId}`,
  )

/** Ends a locked job with its order's final status. Runs in the transaction that appended its last events. */
export const storeJobDone = (
  job: FulfilmentJob,
  outcome: Exclude<Order.OrderStatus, "pending" | "processing">,
) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      UPDATE fulfilment_jobs
      SET stage = 'done', outcome = ${outcome}, attempts = 0, last_error = NULL, updated_at = now()
      WHERE order_id = ${job.orderId}`,
  )

/** The longest a failing step waits before its next attempt. */
export const MAX_RETRY_DELAY = Duration.minutes(5)

/** How long a step that failed `attempts` times so far waits: doubling from 1 second, at most 5 minutes. */
export const retryDelayOf = (attempts: number) =>
  Duration.min(Duration.times(Duration.seconds(1), 2 ** Math.min(attempts, 16)), MAX_RETRY_DELAY)

/**
 * Postpones a locked job whose step failed (nothing of the step was kept): one more attempt counted, the
 * error kept for operators, due again after `retryDelayOf` its previous attempts.
 */
export const rescheduleJob = (job: FulfilmentJob, error: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      UPDATE fulfilment_jobs
      SET attempts = attempts + 1, last_error = ${error.slice(0, 2000)},
          due_at = now() + ${Duration.toMillis(retryDelayOf(job.attempts))} * interval '1 millisecond',
          updated_at = now()
      WHERE order_id = ${job.orderId}`,
  )

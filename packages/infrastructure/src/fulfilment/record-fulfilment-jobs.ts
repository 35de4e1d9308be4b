import { SqlClient } from "@effect/sql"
import type { Order } from "@points/domain"
import { Duration, Effect } from "effect"
import { LOG_CHANNEL } from "../event-store/log-notifier.js"
import type { RecordedEvent } from "../event-store/recorded-event.js"

/** The name of the consumer that records fulfilment jobs (its checkpoint, lock and metrics). */
export const ORDER_FULFILMENT_CONSUMER = "order-fulfilment"

const insertJobs = `
  INSERT INTO fulfilment_jobs (order_id, partner_id, user_id, stage, due_at, request_id, correlation_id,
                               causation_id)
  SELECT j.order_id, j.partner_id, j.user_id, 'pending', clock_timestamp() + $7 * interval '1 millisecond',
         j.request_id, j.correlation_id, j.causation_id
  FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[])
       AS j(order_id, partner_id, user_id, request_id, correlation_id, causation_id)
  ON CONFLICT (order_id) DO NOTHING
  RETURNING order_id`

/**
 * Records a fulfilment job for every OrderPlaced of a batch of the global log, for `runConsumer`: due
 * `pickUpDelay` later, so that a sandbox order stays `pending` (and can be cancelled) for that long; in the
 * batch's transaction, so with its checkpoint. A redelivered event adds nothing (the
 * order id is the key). When it added any, it NOTIFYs in that transaction, so idle workers wake when the
 * jobs are visible (the NOTIFY of the placing commit came before they existed); only this single consumer
 * instance does so, so it does not serialise the API's writers.
 */
export const recordFulfilmentJobs =
  (pickUpDelay: Duration.DurationInput) => (events: ReadonlyArray<RecordedEvent>) =>
    Effect.gen(function* () {
      const placed = events.filter((recorded) => recorded.type === "OrderPlaced")
      if (placed.length === 0) return
      const sql = yield* SqlClient.SqlClient
      const orders = placed.map((recorded) => recorded.event as Order.OrderPlaced)
      const inserted = yield* sql.unsafe(insertJobs, [
        orders.map((order) => order.orderId),
        placed.map((recorded) => recorded.context.partnerId),
        orders.map((order) => order.userId),
        placed.map((recorded) => recorded.context.requestId),
        placed.map((recorded) => recorded.context.correlationId ?? recorded.eventId),
        placed.map((recorded) => recorded.eventId),
        Duration.toMillis(Duration.decode(pickUpDelay)),
      ])
      if (inserted.length > 0) yield* sql`SELECT pg_notify(${LOG_CHANNEL}, 'fulfilment-jobs')`
    }).pipe(Effect.withSpan("fulfilment.record-jobs", { attributes: { events: events.length } }))

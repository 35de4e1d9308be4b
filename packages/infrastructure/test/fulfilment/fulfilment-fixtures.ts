import { SqlClient } from "@effect/sql"
import type { Order } from "@points/domain"
import { Duration, Effect, Schedule } from "effect"
import {
  addPoints,
  getOrderResource,
  getPointsAccountResource,
  type OrderResource,
  placeOrder,
  type RequestContext,
} from "../../src/index.js"
import { activeUser, item, movement, newReference } from "../services/service-fixtures.js"

/** The delay the tests fulfil with: short, so that orders finish quickly. */
export const TEST_DELAY = Duration.millis(50)

/** An active user holding `points`. */
export const userWith = (context: RequestContext, points: number) =>
  Effect.tap(activeUser(context), (userId) => addPoints(context, movement(userId, points)).pipe(Effect.orDie))

/** Places an order of `lines` (sku, quantity, points) for a user; fails the test on a refusal. */
export const placeFor = (
  context: RequestContext,
  userId: string,
  lines: ReadonlyArray<readonly [string, number, number]> = [["MUG", 2, 100]],
) =>
  placeOrder(context, {
    user_id: userId,
    reference_id: newReference("order"),
    items: lines.map(([sku, quantity, points]) => item(sku, quantity, points)),
  }).pipe(Effect.orDie)

class NotYet {
  readonly _tag = "NotYet"
}

/**
 * Runs `read` every 10 ms until `until` holds for its result and returns that result, failing after
 * `within` (default 15 s): tests wait on the real outcome, never on a sleep.
 */
export const pollUntil = <A, R>(
  read: Effect.Effect<A, never, R>,
  until: (value: A) => boolean,
  within: Duration.DurationInput = "15 seconds",
) =>
  read.pipe(
    Effect.uninterruptible,
    Effect.filterOrFail(until, () => new NotYet()),
    Effect.retry({ schedule: Schedule.spaced("10 millis") }),
    Effect.timeoutFail({
      duration: within,
      onTimeout: () => new Error(`the awaited condition did not hold within ${Duration.format(within)}`),
    }),
  )

/** Reads the order until `until` holds and returns it (see pollUntil). */
export const awaitOrder = (
  context: RequestContext,
  orderId: string,
  until: (order: OrderResource) => boolean,
  within?: Duration.DurationInput,
) => pollUntil(getOrderResource(context, orderId).pipe(Effect.orDie), until, within)

const finalStatuses: ReadonlyArray<Order.OrderStatus> = ["completed", "failed", "cancelled"]

/** Waits until the order reaches a final status and returns it. */
export const awaitFinal = (context: RequestContext, orderId: string, within?: Duration.DurationInput) =>
  awaitOrder(context, orderId, (order) => finalStatuses.includes(order.status), within)

/** An event of an order's stream with the metadata fulfilment records. */
export interface LoggedEvent {
  readonly event_id: string
  readonly event_type: string
  readonly request_id: string | null
  readonly idempotency_key: string | null
  readonly causation_id: string | null
  readonly correlation_id: string | null
}

/** Every event of a stream, in order, with its metadata. */
export const eventsOf = (streamId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<LoggedEvent>`
      SELECT event_id, event_type, request_id, idempotency_key, causation_id, correlation_id
      FROM events WHERE stream_id = ${streamId} ORDER BY stream_version`,
  )

/** The types of an order's events, in order. */
export const orderEventTypes = (orderId: string) =>
  Effect.map(eventsOf(`order-${orderId}`), (events) => events.map((event) => event.event_type))

/** The `OrderRefunded` events of a user's points account for one order. */
export const refundsOf = (userId: string, orderId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ event_id: string }>`
      SELECT event_id FROM events
      WHERE stream_id = ${`ledger-${userId}`} AND event_type = 'OrderRefunded' AND data->>'orderId' = ${orderId}`,
  )

/** A job's row as the worker leaves it. */
export interface JobRow {
  readonly stage: string
  readonly outcome: string | null
  readonly attempts: number
  readonly last_error: string | null
  readonly updated_at: Date
}

/** The fulfilment jobs of an order: none or one. */
export const jobsOf = (orderId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<JobRow>`
      SELECT stage, outcome, attempts, last_error, updated_at FROM fulfilment_jobs WHERE order_id = ${orderId}`,
  )

/** A user's balance. */
export const balanceOf = (context: RequestContext, userId: string) =>
  Effect.map(getPointsAccountResource(context, userId).pipe(Effect.orDie), (account) => account.balance)

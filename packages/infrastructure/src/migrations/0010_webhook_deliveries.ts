import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Webhook deliveries: one row per attempt to deliver one public event to one endpoint (DESIGN.md section 6).
 *
 * `pending` is an attempt scheduled and not yet made, due at `next_attempt_at`; once made it becomes
 * `succeeded` or `failed` with what happened (`attempted_at`, `response_status`, `duration_ms`, `error`) and
 * `next_attempt_at` says when the following attempt is due (null when none is). Dispatchers claim due rows
 * with `FOR UPDATE SKIP LOCKED` and hold them by a lease (`lease_until`, `leased_by`): a dispatcher that dies
 * leaves a lease that runs out, and the attempt is made again. No foreign key to the endpoint: an endpoint's
 * read-model row goes when it is deleted, and the history of its deliveries stays.
 *
 * `webhook_endpoint_failures`: since when an endpoint has been failing without a success in between (the
 * 5-day rule). Operational state of the dispatcher, not a read model: a rebuild of the read models leaves it.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id               uuid PRIMARY KEY,
      partner_id       uuid NOT NULL,
      endpoint_id      uuid NOT NULL,
      event_id         uuid NOT NULL REFERENCES public_events (id),
      attempt          integer NOT NULL CHECK (attempt >= 1),
      status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
      response_status  integer,
      duration_ms      integer CHECK (duration_ms >= 0),
      error            text,
      attempted_at     timestamptz,
      next_attempt_at  timestamptz,
      lease_until      timestamptz,
      leased_by        text,
      CHECK (status <> 'pending' OR next_attempt_at IS NOT NULL),
      CHECK ((status = 'pending') = (attempted_at IS NULL))
    )`
  // The dispatchers' queue: only pending rows, in the order they fall due.
  yield* sql`
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  // The deliveries list, newest first, and the sweep of an endpoint's pending rows when it is disabled.
  yield* sql`CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, id)`
  yield* sql`
    CREATE TABLE webhook_endpoint_failures (
      endpoint_id    uuid PRIMARY KEY,
      partner_id     uuid NOT NULL,
      failing_since  timestamptz NOT NULL
    )`
})

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { uuidV7 } from "../ids/uuid-v7.js"

/** The partner's public events among `ids` (the others are not the partner's, or do not exist). */
export const selectPartnerEvents = (partnerId: string, ids: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql.unsafe<{ id: string }>(
        `SELECT id FROM public_events WHERE partner_id = $1 AND id = ANY($2::uuid[])`,
        [partnerId, ids],
      ),
      (rows) => new Set(rows.map((row) => row.id)),
    ),
  )

/**
 * The partner's public events that occurred in `[since, until)` and are of one of `types` (all types when
 * empty), in the order they occurred; at most `limit`.
 */
export const selectEventsBetween = (options: {
  readonly partnerId: string
  readonly since: Date | null
  readonly until: Date | null
  readonly types: ReadonlyArray<string>
  readonly limit: number
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql.unsafe<{ id: string }>(
        `SELECT id FROM public_events
         WHERE partner_id = $1
           AND ($2::timestamptz IS NULL OR occurred_at >= $2::timestamptz)
           AND ($3::timestamptz IS NULL OR occurred_at < $3::timestamptz)
           AND (cardinality($4::text[]) = 0 OR type = ANY($4::text[]))
         ORDER BY occurred_at, global_position
         LIMIT $5`,
        [
          options.partnerId,
          options.since?.toISOString() ?? null,
          options.until?.toISOString() ?? null,
          options.types,
          options.limit,
        ],
      ),
      (rows) => rows.map((row) => row.id),
    ),
  )

/**
 * Schedules each event to the endpoint again, due now, in the order given: a replay. An event with an attempt
 * still pending there (queued, being made, or waiting for its retry) gets no second one: that attempt is made
 * due now, and keeps its place in its retry schedule; the others get a fresh first attempt. So replaying
 * again and again, or many replays at once, never stacks attempts of one event (each would be sent, to a
 * receiver that then deduplicates them). The events keep their ids, so receivers see the same `webhook-id`.
 * Replays of one endpoint take turns (a lock to the end of the transaction): the second sees what the first
 * scheduled.
 */
export const scheduleReplay = (partnerId: string, endpointId: string, eventIds: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.zipRight(
      // Its own statement: the next one's snapshot sees what a replay that held the lock before committed.
      sql.unsafe("SELECT pg_advisory_xact_lock(hashtextextended('webhook-replay:' || $1, 0))", [endpointId]),
      sql.unsafe(
        `WITH pending AS (
           UPDATE webhook_deliveries SET next_attempt_at = LEAST(next_attempt_at, now())
           -- The endpoint's pending attempts alone (webhook_deliveries_due_by_endpoint), not its history.
           WHERE partner_id = $1 AND endpoint_id = $2 AND status = 'pending' AND event_id = ANY($4::uuid[])
           RETURNING event_id
         )
         INSERT INTO webhook_deliveries (id, partner_id, endpoint_id, event_id, attempt, status, next_attempt_at)
         SELECT s.id, $1, $2, s.event_id, 1, 'pending', now()
         FROM unnest($3::uuid[], $4::uuid[]) AS s(id, event_id)
         WHERE s.event_id NOT IN (SELECT event_id FROM pending)`,
        [partnerId, endpointId, eventIds.map(() => uuidV7()), eventIds],
      ),
    ),
  )

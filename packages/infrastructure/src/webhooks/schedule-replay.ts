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
 * Schedules a fresh first attempt, due now, of each event to the endpoint, in the order given: a replay. The
 * events keep their ids, so receivers see the same `webhook-id` and can deduplicate.
 */
export const scheduleFirstAttempts = (
  partnerId: string,
  endpointId: string,
  eventIds: ReadonlyArray<string>,
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(
      `INSERT INTO webhook_deliveries (id, partner_id, endpoint_id, event_id, attempt, status, next_attempt_at)
       SELECT id, $1, $2, event_id, 1, 'pending', now()
       FROM unnest($3::uuid[], $4::uuid[]) AS s(id, event_id)`,
      [partnerId, endpointId, eventIds.map(() => uuidV7()), eventIds],
    ),
  )

import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"

/** A due attempt as a dispatcher claimed it, with everything needed to make it. */
export interface ClaimedDelivery {
  readonly id: string
  readonly partner_id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly attempt: number
  /** The claim's token, in `leased_by`: only its holder records the attempt. */
  readonly leased_by: string
  readonly event_type: string
  readonly occurred_at: Date
  readonly data: Readonly<Record<string, unknown>>
  /** Null when the endpoint was deleted. */
  readonly url: string | null
  readonly enabled: boolean | null
  /** The secrets that sign now: the current one, and the replaced one during its grace period. */
  readonly secret: string | null
  /** The replaced secrets still in their grace period, newest first. */
  readonly previous_secrets: ReadonlyArray<string>
  /** The database's clock at the claim: when the attempt is made. */
  readonly claimed_at: Date
}

/**
 * Claims at most `limit` due pending attempts for `lease`: rows another dispatcher holds are skipped, not
 * waited for (`FOR UPDATE SKIP LOCKED`), and an attempt stays claimed only until its lease runs out, so a
 * dispatcher that died releases its attempts by doing nothing. One statement, committed at once: the row
 * locks last only for the claim; the lease keeps the attempt for its holder afterwards.
 */
export const claimDueDeliveries = (options: {
  readonly limit: number
  readonly lease: Duration.DurationInput
  readonly token: string
}) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<ClaimedDelivery>`
      WITH due AS (
        SELECT id FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at <= now()
          AND (lease_until IS NULL OR lease_until <= now())
        ORDER BY next_attempt_at
        LIMIT ${options.limit}
        FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE webhook_deliveries d
        SET lease_until = now() + ${Duration.toMillis(Duration.decode(options.lease))} * interval '1 millisecond',
            leased_by = ${options.token}
        FROM due WHERE d.id = due.id
        RETURNING d.id, d.partner_id, d.endpoint_id, d.event_id, d.attempt, d.leased_by
      )
      SELECT c.id, c.partner_id, c.endpoint_id, c.event_id, c.attempt, c.leased_by,
             pe.type AS event_type, pe.occurred_at, pe.data,
             e.url, e.enabled, s.secret,
             ARRAY(SELECT p.secret
                   FROM jsonb_array_elements(e.previous_secrets) WITH ORDINALITY AS previous(item, n)
                   JOIN webhook_signing_secrets p
                     ON p.id = (previous.item ->> 'id')::uuid AND p.partner_id = c.partner_id
                   WHERE (previous.item ->> 'valid_until')::timestamptz > now()
                   ORDER BY previous.n) AS previous_secrets,
             now() AS claimed_at
      FROM claimed c
      JOIN public_events pe ON pe.id = c.event_id
      LEFT JOIN webhook_endpoints e ON e.id = c.endpoint_id AND e.partner_id = c.partner_id
      LEFT JOIN webhook_signing_secrets s ON s.id = e.secret_id AND s.partner_id = c.partner_id`,
  )

/**
 * How long until the next unclaimed pending attempt falls due, or null when none is pending: a dispatcher
 * with nothing to do sleeps that long (at most its poll interval, which also finds leases that ran out).
 * Reads the due index in order and stops at the first unclaimed row.
 */
export const untilNextDue = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ wait_ms: number }>`
      SELECT (EXTRACT(EPOCH FROM (next_attempt_at - now())) * 1000)::float8 AS wait_ms
      FROM webhook_deliveries
      WHERE status = 'pending' AND lease_until IS NULL
      ORDER BY next_attempt_at LIMIT 1`,
    (rows) => (rows[0] === undefined ? null : Duration.millis(Math.max(0, rows[0].wait_ms))),
  ),
)

/** Gives a claimed attempt back at once (a dispatcher stopping before it made it): no wait for its lease. */
export const releaseClaim = (id: string, token: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      UPDATE webhook_deliveries SET lease_until = NULL
      WHERE id = ${id} AND leased_by = ${token} AND status = 'pending'`,
  )

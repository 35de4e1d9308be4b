import { SqlClient } from "@effect/sql"
import { Effect, Metric } from "effect"
import { isLockNotAvailable } from "../database/sql-state.js"
import { lockStreams } from "../event-store/lock-streams.js"
import { webhookStream } from "../event-store/stream-handle.js"
import { uuidV7 } from "../ids/uuid-v7.js"
import { attemptsRecorded } from "./delivery-metrics.js"

/** An attempt that was claimed and never recorded: the row, its endpoint and the claim's token. */
export interface CutOffAttempt {
  readonly id: string
  readonly partner_id: string
  readonly endpoint_id: string
  readonly leased_by: string
}

/**
 * When a cut-off attempt was claimed, as SQL over its row: rows claimed before migration 0025 hold only their
 * lease's end, the default lease (60 s) after the claim.
 */
export const CUT_OFF_CLAIM_TIME = "coalesce(claimed_at, lease_until - interval '60 seconds')"

/** The error recorded for an attempt its dispatcher stopped making (SIGTERM, a stop of its scope). */
export const STOPPED_ERROR =
  "cut off: the dispatcher stopped during the attempt (the receiver may have had it)"

/** The error recorded for an attempt whose dispatcher died or stalled past its lease. */
export const LAPSED_ERROR =
  "no result: the dispatcher making it stopped answering and its lease ran out (the receiver may have had it)"

/** How long a stopping dispatcher waits for an endpoint's stream to record an attempt it cut off. */
export const STOPPING_LOCK_WAIT = "500ms"

// How long a claim waits for an endpoint's stream to record a lapsed attempt: next to nothing, so that a
// holder that stalls (a paused process) never slows the claims; a later claim records it.
const LAPSED_LOCK_WAIT = "5ms"

/**
 * Records an attempt that was cut off as failed with `error`, at its claim's time, and schedules the next one
 * at once, as its own attempt: one delivery record per attempt, though this one's outcome is unknown. Not the
 * receiver's doing, so no failing streak starts and the next attempt stands at the same entry of the retry
 * schedule (it spends none of the receiver's retries). None is scheduled when the endpoint is disabled or
 * deleted, or was disabled while this attempt was claimed (the endpoint's stream locked first, as
 * recordAttempt does, waiting `lockWait` at most: a lock timeout fails it). False when the attempt was
 * recorded already (by its holder, or as cut off by another dispatcher). Run it in a transaction.
 */
export const recordCutOff = (attempt: CutOffAttempt, error: string, lockWait: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`SELECT set_config('lock_timeout', ${lockWait}, true)`
    yield* lockStreams({
      partnerId: attempt.partner_id,
      write: [webhookStream(attempt.endpoint_id).streamId],
      read: [],
    })
    const cut = yield* sql<{ event_id: string; attempt: number; schedule_step: number; follows: boolean }>`
      UPDATE webhook_deliveries d
      SET status = 'failed', error = ${error}, lease_until = NULL,
          attempted_at = ${sql.literal(CUT_OFF_CLAIM_TIME)},
          next_attempt_at = CASE WHEN e.enabled AND d.disabled_during_lease IS DISTINCT FROM d.leased_by THEN now() END
      FROM (SELECT ${attempt.id}::uuid AS id) target
      LEFT JOIN webhook_endpoints e ON e.id = ${attempt.endpoint_id} AND e.partner_id = ${attempt.partner_id}
      WHERE d.id = target.id AND d.leased_by = ${attempt.leased_by} AND d.status = 'pending'
      RETURNING d.event_id, d.attempt, coalesce(d.schedule_step, d.attempt) AS schedule_step,
                coalesce(e.enabled, false) AND d.disabled_during_lease IS DISTINCT FROM d.leased_by AS follows`
    const row = cut[0]
    if (row === undefined) return false
    if (row.follows) {
      yield* sql`
        INSERT INTO webhook_deliveries (id, partner_id, endpoint_id, event_id, attempt, schedule_step, status,
                                        next_attempt_at)
        VALUES (${uuidV7()}, ${attempt.partner_id}, ${attempt.endpoint_id}, ${row.event_id}, ${row.attempt + 1},
                ${row.schedule_step}, 'pending', now())`
    }
    yield* Metric.increment(attemptsRecorded("cut_off"))
    return true
  })

/**
 * Records the attempts whose lease ran out before their dispatcher recorded them (it died, or stalled past
 * its lease) as cut off, endpoints in turn, at most `limit` at a time, each in a transaction of its own. One whose
 * endpoint's stream is held (a stalled holder) is left to a later claim at once, with every other of that
 * endpoint, as is one that another dispatcher is recording. Returns how many it recorded.
 */
export const recordLapsedAttempts = (options: { readonly limit: number }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Endpoints in turn (each one's oldest first), so that many of one endpoint held cannot fill the batch.
    const lapsed = yield* sql<CutOffAttempt>`
      SELECT id, partner_id, endpoint_id, leased_by FROM (
        SELECT id, partner_id, endpoint_id, leased_by, lease_until,
               row_number() OVER (PARTITION BY endpoint_id ORDER BY lease_until, id) AS n
        FROM webhook_deliveries
        WHERE status = 'pending' AND lease_until <= now() AND leased_by IS NOT NULL
      ) lapsed
      ORDER BY n, lease_until, id
      LIMIT ${options.limit}`
    const held = new Set<string>()
    let recorded = 0
    for (const attempt of lapsed) {
      if (held.has(attempt.endpoint_id)) continue
      // A conflict on the endpoint's stream (a unit of work creating it meanwhile) also waits for a later claim.
      const done = yield* sql.withTransaction(recordCutOff(attempt, LAPSED_ERROR, LAPSED_LOCK_WAIT)).pipe(
        Effect.catchTag("StreamVersionConflict", () => Effect.succeed(false)),
        Effect.catchIf(isLockNotAvailable, () =>
          Effect.sync(() => held.add(attempt.endpoint_id)).pipe(Effect.as(false)),
        ),
      )
      if (done) recorded++
    }
    return recorded
  })

/**
 * Ends the lease of an attempt its dispatcher stopped making but could not record (its endpoint's stream
 * held past STOPPING_LOCK_WAIT): the next claim records it as cut off once it can, and the partner's share
 * is free at once instead of after the lease.
 */
export const endLease = (attempt: CutOffAttempt) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      UPDATE webhook_deliveries SET lease_until = now()
      WHERE id = ${attempt.id} AND leased_by = ${attempt.leased_by} AND status = 'pending'`,
  )

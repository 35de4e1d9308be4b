import { SqlClient } from "@effect/sql"
import { Effect, Metric } from "effect"
import { hasSqlState, LOCK_NOT_AVAILABLE } from "../database/sql-state.js"
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

/** The error recorded for an attempt its dispatcher stopped making (SIGTERM, a stop of its scope). */
export const STOPPED_ERROR =
  "cut off: the dispatcher stopped during the attempt (the receiver may have had it)"

/** The error recorded for an attempt whose dispatcher died or stalled past its lease. */
export const LAPSED_ERROR =
  "no result: the dispatcher making it stopped answering and its lease ran out (the receiver may have had it)"

// How long a cut-off record waits for the endpoint's stream lock: a holder that stalls (a paused process)
// must not stall every dispatcher's claims behind it; the lapsed attempt is recorded by a later claim.
const STREAM_LOCK_TIMEOUT = "500ms"

/**
 * Records an attempt that was cut off as failed with `error`, at its claim's time, and schedules the next one
 * at once, as its own attempt: one delivery record per attempt, though this one's outcome is unknown. Not the
 * receiver's doing, so no failing streak starts and the next attempt stands at the same entry of the retry
 * schedule (it spends none of the receiver's retries). None is scheduled when the endpoint is disabled or
 * deleted, or was disabled while this attempt was claimed (the endpoint's stream locked first, as
 * recordAttempt does, waiting half a second at most). False when the attempt was recorded already (by its
 * holder, or as cut off by another dispatcher). Run it in a transaction.
 */
export const recordCutOff = (attempt: CutOffAttempt, error: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`SELECT set_config('lock_timeout', ${STREAM_LOCK_TIMEOUT}, true)`
    yield* lockStreams({
      partnerId: attempt.partner_id,
      write: [webhookStream(attempt.endpoint_id).streamId],
      read: [],
    })
    const cut = yield* sql<{ event_id: string; attempt: number; schedule_step: number; follows: boolean }>`
      UPDATE webhook_deliveries d
      SET status = 'failed', error = ${error}, lease_until = NULL,
          attempted_at = coalesce(d.claimed_at, d.lease_until - interval '60 seconds'),
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
 * its lease) as cut off, at most `limit` at a time, each in a transaction of its own. One whose endpoint's
 * stream is held (a stalled holder) or that another dispatcher is recording is left to a later claim.
 * Returns how many it recorded.
 */
export const recordLapsedAttempts = (options: { readonly limit: number }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const lapsed = yield* sql<CutOffAttempt>`
      SELECT id, partner_id, endpoint_id, leased_by
      FROM webhook_deliveries
      WHERE status = 'pending' AND lease_until <= now() AND leased_by IS NOT NULL
      LIMIT ${options.limit}`
    let recorded = 0
    for (const attempt of lapsed) {
      // A conflict on the endpoint's stream (a unit of work creating it meanwhile) also waits for a later claim.
      const done = yield* sql.withTransaction(recordCutOff(attempt, LAPSED_ERROR)).pipe(
        Effect.catchTag("StreamVersionConflict", () => Effect.succeed(false)),
        Effect.catchIf(
          (error) => hasSqlState(error, LOCK_NOT_AVAILABLE),
          () => Effect.succeed(false),
        ),
      )
      if (done) recorded++
    }
    return recorded
  })

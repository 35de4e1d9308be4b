import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { lockStreams } from "../event-store/lock-streams.js"
import { webhookStream } from "../event-store/stream-handle.js"
import { uuidV7 } from "../ids/uuid-v7.js"

/** An attempt that was claimed and never recorded: the row, the claim's token and when it was claimed. */
export interface CutOffAttempt {
  readonly id: string
  readonly partner_id: string
  readonly endpoint_id: string
  readonly leased_by: string
  readonly claimed_at: Date
}

/** The error recorded for an attempt its dispatcher stopped making (SIGTERM, a stop of its scope). */
export const STOPPED_ERROR =
  "cut off: the dispatcher stopped during the attempt (the receiver may have had it); made again at once"

/** The error recorded for an attempt whose dispatcher died or stalled past its lease. */
export const LAPSED_ERROR =
  "no result: the dispatcher making it stopped answering and its lease ran out (the receiver may have had it); made again at once"

/**
 * Records an attempt that was cut off as failed with `error`, and schedules the next one at once, as its own
 * attempt: one delivery record per attempt, though this one's outcome is unknown. Not the receiver's doing, so
 * no failing streak starts, and the next attempt is made even after the schedule's last one. None is
 * scheduled when the endpoint is disabled or deleted, or was disabled while this attempt was claimed (locked
 * first, as recordAttempt does, so a disable sees the new attempt or this sees the disable). False when the attempt was recorded already (by its holder, or
 * as cut off by another dispatcher). Run it in a transaction.
 */
export const recordCutOff = (attempt: CutOffAttempt, error: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* lockStreams({
      partnerId: attempt.partner_id,
      write: [webhookStream(attempt.endpoint_id).streamId],
      read: [],
    })
    const cut = yield* sql<{ event_id: string; attempt: number; enabled: boolean }>`
      UPDATE webhook_deliveries d
      SET status = 'failed', error = ${error}, attempted_at = ${attempt.claimed_at}, lease_until = NULL,
          next_attempt_at = CASE WHEN e.enabled AND d.disabled_during_lease IS DISTINCT FROM d.leased_by THEN now() END
      FROM (SELECT ${attempt.id}::uuid AS id) target
      LEFT JOIN webhook_endpoints e ON e.id = ${attempt.endpoint_id} AND e.partner_id = ${attempt.partner_id}
      WHERE d.id = target.id AND d.leased_by = ${attempt.leased_by} AND d.status = 'pending'
      RETURNING d.event_id, d.attempt,
                coalesce(e.enabled, false) AND d.disabled_during_lease IS DISTINCT FROM d.leased_by AS enabled`
    const row = cut[0]
    if (row === undefined) return false
    if (row.enabled) {
      yield* sql`
        INSERT INTO webhook_deliveries (id, partner_id, endpoint_id, event_id, attempt, status, next_attempt_at)
        VALUES (${uuidV7()}, ${attempt.partner_id}, ${attempt.endpoint_id}, ${row.event_id}, ${row.attempt + 1},
                'pending', now())`
    }
    return true
  })

/**
 * Records the attempts whose lease ran out before their dispatcher recorded them (it died, or stalled past
 * its lease) as cut off, at most `limit` at a time, each in a transaction of its own; `lease` is the claims'
 * lease, which dates each claim. Returns how many it recorded.
 */
export const recordLapsedAttempts = (options: {
  readonly lease: Duration.DurationInput
  readonly limit: number
}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const leaseMs = Duration.toMillis(Duration.decode(options.lease))
    const lapsed = yield* sql<CutOffAttempt>`
      SELECT id, partner_id, endpoint_id, leased_by,
             lease_until - ${leaseMs}::float8 * interval '1 millisecond' AS claimed_at
      FROM webhook_deliveries
      WHERE status = 'pending' AND lease_until <= now() AND leased_by IS NOT NULL
      LIMIT ${options.limit}`
    let recorded = 0
    for (const attempt of lapsed) {
      // A conflict on the endpoint's stream (a unit of work creating it meanwhile) leaves it to the next claim.
      const done = yield* sql
        .withTransaction(recordCutOff(attempt, LAPSED_ERROR))
        .pipe(Effect.catchTag("StreamVersionConflict", () => Effect.succeed(false)))
      if (done) recorded++
    }
    return recorded
  })

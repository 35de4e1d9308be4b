import { SqlClient } from "@effect/sql"
import type { WebhookEndpoint } from "@points/domain"
import { Duration, Effect } from "effect"
import { lockStreams } from "../event-store/lock-streams.js"
import { webhookStream } from "../event-store/stream-handle.js"
import { uuidV7 } from "../ids/uuid-v7.js"
import type { ClaimedDelivery } from "./claim-deliveries.js"
import { disableEndpoint } from "./disable-endpoint.js"

/** What one attempt came to, as the dispatcher decided from the receiver's answer (or its absence). */
export interface AttemptResult {
  readonly status: "succeeded" | "failed"
  readonly responseStatus: number | null
  readonly durationMs: number | null
  readonly error: string | null
  /** Seconds until the next attempt; null when there is none (delivered, given up, or disabled). */
  readonly nextInSeconds: number | null
  /** The receiver asked to stop (410 Gone): the endpoint is disabled. */
  readonly disable: WebhookEndpoint.DisabledReason | null
  /** False for an attempt that was not made (the endpoint was disabled or deleted): no failing streak. */
  readonly made: boolean
}

/**
 * Records an attempt in one transaction: the claimed row becomes succeeded or failed, the endpoint's failing
 * streak is cleared by a success or started by a failure, and a streak older than `disableAfterFailingFor`,
 * or a 410, disables the endpoint; otherwise a failure schedules the next attempt as a pending row, unless the
 * endpoint was disabled at any time since the claim (even if enabled again since) or deleted. Only the
 * claim's holder records: when its lease ran out and another dispatcher took the attempt over, nothing is
 * written (false), and the other one's record stands.
 */
export const recordAttempt = (
  claim: ClaimedDelivery,
  result: AttemptResult,
  options: { readonly disableAfterFailingFor: Duration.DurationInput },
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const failed = result.made && result.status === "failed"
    // A failure may disable the endpoint or schedule a retry: the endpoint's stream is locked first, as a
    // partner's disable locks it first, so the two take turns. A disable that committed meanwhile is seen
    // below, and one that waited sees the retry when it ends the endpoint's pending attempts.
    if (failed) {
      yield* lockStreams({
        partnerId: claim.partner_id,
        write: [webhookStream(claim.endpoint_id).streamId],
        read: [],
      })
    }
    const updated = yield* sql<{ disabled_meanwhile: boolean }>`
      UPDATE webhook_deliveries
      SET status = ${result.status}, response_status = ${result.responseStatus},
          duration_ms = ${result.durationMs}, error = ${result.error}, attempted_at = ${claim.claimed_at},
          next_attempt_at = NULL
      WHERE id = ${claim.id} AND leased_by = ${claim.leased_by} AND status = 'pending'
      RETURNING disabled_during_lease IS NOT DISTINCT FROM leased_by AS disabled_meanwhile`
    const [row] = updated
    if (row === undefined) return false
    // A failure of an attempt whose endpoint was disabled since its claim, or is deleted, starts no streak (the
    // disable ended it, and one started now would count from before an enabling) and schedules no retry. The
    // endpoint being enabled now is not enough: it may have been disabled and enabled again meanwhile, and the
    // disable promised that no retry would follow (the mark on the row says so).
    const enabled = failed && !row.disabled_meanwhile && (yield* isEnabled(claim))
    let disable = result.disable
    if (result.made && result.status === "succeeded") {
      yield* sql`DELETE FROM webhook_endpoint_failures WHERE endpoint_id = ${claim.endpoint_id}`
    } else if (enabled) {
      const limitMs = Duration.toMillis(Duration.decode(options.disableAfterFailingFor))
      const streak = yield* sql<{ too_long: boolean }>`
        INSERT INTO webhook_endpoint_failures (endpoint_id, partner_id, failing_since)
        VALUES (${claim.endpoint_id}, ${claim.partner_id}, ${claim.claimed_at})
        ON CONFLICT (endpoint_id) DO UPDATE SET failing_since = webhook_endpoint_failures.failing_since
        RETURNING failing_since <= now() - ${limitMs}::float8 * interval '1 millisecond' AS too_long`
      if (disable === null && streak[0]?.too_long === true) disable = "failing"
    }
    if (disable !== null) {
      yield* disableEndpoint(claim.partner_id, claim.endpoint_id, disable)
    } else if (enabled && result.nextInSeconds !== null) {
      const next = yield* sql<{ next_attempt_at: Date }>`
        UPDATE webhook_deliveries
        SET next_attempt_at = now() + ${result.nextInSeconds}::float8 * interval '1 second'
        WHERE id = ${claim.id}
        RETURNING next_attempt_at`
      yield* sql`
        INSERT INTO webhook_deliveries (id, partner_id, endpoint_id, event_id, attempt, schedule_step, status,
                                        next_attempt_at)
        VALUES (${uuidV7()}, ${claim.partner_id}, ${claim.endpoint_id}, ${claim.event_id}, ${claim.attempt + 1},
                ${claim.schedule_step + 1},
                'pending', ${next[0]?.next_attempt_at ?? null})`
    }
    return true
  })

// Whether the endpoint still takes deliveries, as committed now (a deleted one has no row).
const isEnabled = (claim: ClaimedDelivery) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ enabled: boolean }>`
        SELECT enabled FROM webhook_endpoints WHERE id = ${claim.endpoint_id} AND partner_id = ${claim.partner_id}`,
      (rows) => rows[0]?.enabled === true,
    ),
  )

import { SqlClient } from "@effect/sql"
import { WebhookEndpoint, WebhookEndpointId } from "@points/domain"
import { Effect } from "effect"
import { webhookStream } from "../event-store/stream-handle.js"
import { runUnitOfWork } from "../services/run-unit-of-work.js"
import { CUT_OFF_CLAIM_TIME, LAPSED_ERROR } from "./cut-off-attempts.js"

/** Who disabled an endpoint: the platform, for one of its reasons, or the partner (`PATCH {"enabled": false}`). */
export type DisabledBy = WebhookEndpoint.DisabledReason | "partner"

/** Why a disabled endpoint's attempt was not made, as its delivery says. */
export const notAttemptedBecause = (disabledBy: DisabledBy) => `not attempted: ${why[disabledBy]}`

const why: Record<DisabledBy, string> = {
  gone: "the endpoint was disabled: it answered 410 Gone",
  failing: "the endpoint was disabled: its deliveries failed for 5 days",
  partner: "the endpoint was disabled by the partner",
}

/**
 * Ends a disabled endpoint's pending attempts as failed, saying who disabled it (one whose lease ran out
 * unrecorded as cut off, LAPSED_ERROR: it may have reached the receiver), except those a dispatcher is
 * making right now: they end when recorded, marked with their claim's token (`disabled_during_lease`) so that a
 * failure schedules no retry and starts no streak even if the endpoint is enabled again before it is recorded.
 * Forgets the failing streak, so that an endpoint enabled again starts afresh. Run in the transaction that
 * disables it: once that commits, none of them can be claimed.
 */
export const endPendingAttempts = (endpointId: string, disabledBy: DisabledBy) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // One whose lease ran out unrecorded was claimed and may have reached the receiver: recorded as cut off.
    yield* sql`
      UPDATE webhook_deliveries
      SET status = 'failed', next_attempt_at = NULL, lease_until = NULL,
          attempted_at = CASE WHEN lease_until IS NULL THEN now()
                              ELSE ${sql.literal(CUT_OFF_CLAIM_TIME)} END,
          error = CASE WHEN lease_until IS NULL THEN ${notAttemptedBecause(disabledBy)} ELSE ${LAPSED_ERROR} END
      WHERE endpoint_id = ${endpointId} AND status = 'pending'
        AND (lease_until IS NULL OR lease_until <= now())`
    // After the ending, in its own statement: an attempt claimed while that one waited for its row is leased
    // by now, and seen here. now() is the transaction's, so the two statements split the rows by one instant.
    yield* sql`
      UPDATE webhook_deliveries SET disabled_during_lease = leased_by
      WHERE endpoint_id = ${endpointId} AND status = 'pending' AND lease_until > now()`
    yield* sql`DELETE FROM webhook_endpoint_failures WHERE endpoint_id = ${endpointId}`
  })

/**
 * Disables an endpoint for the platform (`DisableEndpoint` through its stream, so the read model and the
 * partner see it) and ends its pending attempts (`endPendingAttempts`). An endpoint already disabled or
 * deleted is left as it is. Run inside the recording transaction.
 */
export const disableEndpoint = (
  partnerId: string,
  endpointId: string,
  reason: WebhookEndpoint.DisabledReason,
) =>
  Effect.gen(function* () {
    const id = WebhookEndpointId.make(endpointId)
    yield* runUnitOfWork(
      { endpoint: webhookStream(id) },
      (s) =>
        Effect.map(
          WebhookEndpoint.decide(
            WebhookEndpoint.DisableEndpoint.make({ endpointId: id, reason }),
            s.endpoint,
          ),
          (events) => ({ endpoint: events }),
        ),
      { partnerId, requestId: null, idempotencyKey: null, causationId: null, correlationId: null },
    ).pipe(Effect.catchTag("ResourceNotFound", () => Effect.void))
    yield* endPendingAttempts(endpointId, reason)
    yield* Effect.logInfo("webhook endpoint disabled").pipe(
      Effect.annotateLogs({ endpoint_id: endpointId, reason }),
    )
  })

/** The error text an attempt gets when the endpoint turned out disabled, by the platform or the partner. */
export const disabledBecause = (disabledBy: DisabledBy) => why[disabledBy]

import { SqlClient } from "@effect/sql"
import { WebhookEndpoint, WebhookEndpointId } from "@points/domain"
import { Effect } from "effect"
import { webhookStream } from "../event-store/stream-handle.js"
import { runUnitOfWork } from "../services/run-unit-of-work.js"

const why: Record<WebhookEndpoint.DisabledReason, string> = {
  gone: "the endpoint was disabled: it answered 410 Gone",
  failing: "the endpoint was disabled: its deliveries failed for 5 days",
}

/**
 * Disables an endpoint for the platform (`DisableEndpoint` through its stream, so the read model and the
 * partner see it), ends its pending attempts as failed saying why (except those a dispatcher is making right
 * now: they end when recorded), and forgets its failing streak, so that an endpoint the partner enables again
 * starts afresh. An endpoint already disabled or deleted is left as it is. Run inside the recording
 * transaction.
 */
export const disableEndpoint = (
  partnerId: string,
  endpointId: string,
  reason: WebhookEndpoint.DisabledReason,
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
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
    yield* sql`
      UPDATE webhook_deliveries
      SET status = 'failed', attempted_at = now(), next_attempt_at = NULL, error = ${`not attempted: ${why[reason]}`}
      WHERE endpoint_id = ${endpointId} AND status = 'pending'
        AND (lease_until IS NULL OR lease_until <= now())`
    yield* sql`DELETE FROM webhook_endpoint_failures WHERE endpoint_id = ${endpointId}`
    yield* Effect.logInfo("webhook endpoint disabled").pipe(
      Effect.annotateLogs({ endpoint_id: endpointId, reason }),
    )
  })

/** The error text an attempt gets when the endpoint turned out disabled for this reason. */
export const disabledBecause = (reason: WebhookEndpoint.DisabledReason) => why[reason]

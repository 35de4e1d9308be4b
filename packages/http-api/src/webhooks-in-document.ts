import type { WebhookEndpoint } from "@points/domain"
import type { Json } from "./document-json.js"

// Which schema of components carries each event type's payload (every type: the compiler checks).
const payloadOf: { readonly [Type in WebhookEndpoint.PublicEventType]: string } = {
  "user.created": "UserEvent",
  "user.activated": "UserEvent",
  "user.closed": "UserEvent",
  "points.added": "PointsEvent",
  "points.subtracted": "PointsEvent",
  "order.created": "OrderEvent",
  "order.status_changed": "OrderEvent",
}

const header = (name: string, description: string) => ({
  name,
  in: "header",
  required: true,
  description,
  schema: { type: "string" },
})

const DELIVERY =
  "Signed as Standard Webhooks: verify `webhook-signature` (`v1,<base64 HMAC-SHA256 of \"id.timestamp.body\">` with the endpoint's `whsec_` secret; after a rotation the replaced secret signs too, for 24 hours) and reject an old `webhook-timestamp`. At least once: only a 2xx within 10 seconds counts; anything else is retried (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h), honouring `Retry-After`; 410 disables the endpoint, as do 5 days of failures. Deduplicate on `webhook-id` (the event's id, kept by a replay) and drop a `data.version` older than one already applied."

/**
 * An OpenAPI transform of the whole document: the webhooks the platform sends (OpenAPI 3.1 `webhooks`), one
 * per event type, with the Standard Webhooks headers, the payload's schema and what counts as delivered.
 */
export const webhooksInDocument = (spec: Json): Json => ({
  ...spec,
  webhooks: Object.fromEntries(
    Object.entries(payloadOf).map(([type, schema]) => [
      type,
      {
        post: {
          operationId: `webhooks.${type}`,
          summary: `${type} (webhook)`,
          description: DELIVERY,
          parameters: [
            header("webhook-id", "The event's id: the same on every attempt and replay"),
            header("webhook-timestamp", "When this attempt was signed, in Unix seconds"),
            header("webhook-signature", "Space-separated `v1,<base64>` signatures, one per secret in use"),
          ],
          requestBody: {
            required: true,
            content: { "application/json": { schema: { $ref: `#/components/schemas/${schema}` } } },
          },
          responses: {
            "2XX": { description: "Delivered" },
            "410": { description: "Gone: the endpoint is disabled, nothing more is sent to it" },
          },
        },
      },
    ]),
  ),
})

import { Webhook } from "standardwebhooks"

/** The Standard Webhooks headers of one attempt. */
export interface WebhookHeaders {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
}

/**
 * Signs a body as Standard Webhooks says (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`), once per secret
 * that signs now (the current one, and the replaced one during its grace period), space-separated: a receiver
 * holding either secret verifies the delivery.
 */
export const signWebhook = (
  id: string,
  at: Date,
  body: string,
  secrets: ReadonlyArray<string>,
): WebhookHeaders => ({
  "webhook-id": id,
  "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
  "webhook-signature": secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(" "),
})

import { Schema } from "effect"
import { IsoTimestamp } from "./iso-timestamp.js"

/**
 * One attempt to deliver a public event to a webhook endpoint, as the deliveries list returns it (DESIGN.md
 * section 6). `pending`: scheduled at `next_attempt_at`, not made yet. Made attempts carry when
 * (`attempted_at`), the receiver's status (none when it did not answer), how long it took and, on failure,
 * why; `next_attempt_at` then says when the next attempt is due (null when none is).
 */
export const WebhookDeliveryResource = Schema.Struct({
  id: Schema.String,
  event_id: Schema.String,
  attempt: Schema.Int,
  status: Schema.Literal("pending", "succeeded", "failed"),
  response_status: Schema.NullOr(Schema.Int),
  duration_ms: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  attempted_at: Schema.NullOr(IsoTimestamp),
  next_attempt_at: Schema.NullOr(IsoTimestamp),
}).pipe(Schema.annotations({ identifier: "WebhookDelivery" }))
export type WebhookDeliveryResource = typeof WebhookDeliveryResource.Type

/** The answer to a replay: how many deliveries were scheduled. */
export const ReplayResultResource = Schema.Struct({
  replayed: Schema.Int,
}).pipe(Schema.annotations({ identifier: "ReplayResult" }))
export type ReplayResultResource = typeof ReplayResultResource.Type

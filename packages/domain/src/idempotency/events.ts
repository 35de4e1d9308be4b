import { Schema } from "effect"
import { eventCatalog } from "../shared/event-catalog.js"
import { PartnerId } from "../shared/ids.js"
import { RequestFingerprint } from "./fingerprint.js"
import { IdempotencyKeyValue } from "./key.js"
import { RecordedResponse } from "./response.js"

/**
 * A request claimed the key and may execute until `leaseExpiresAt`; `takeover` marks a claim taken from a
 * request whose lease ran out (its process died). The key's lifetime counts from `firstReceivedAt`.
 */
export class KeyClaimed extends Schema.TaggedClass<KeyClaimed>()("KeyClaimed", {
  partnerId: PartnerId,
  key: IdempotencyKeyValue,
  fingerprint: RequestFingerprint,
  firstReceivedAt: Schema.DateTimeUtc,
  expiresAt: Schema.DateTimeUtc,
  leaseExpiresAt: Schema.DateTimeUtc,
  takeover: Schema.Boolean,
  at: Schema.DateTimeUtc,
}) {}

/** The claiming request finished with a recordable response; every retry until expiry gets it back. */
export class ResponseRecorded extends Schema.TaggedClass<ResponseRecorded>()("ResponseRecorded", {
  partnerId: PartnerId,
  key: IdempotencyKeyValue,
  response: RecordedResponse,
  at: Schema.DateTimeUtc,
}) {}

/**
 * The claiming request gave the key back without a recorded response, so the same request may run again:
 * `status` is the unrecorded status it ended with (422, 5xx), or null when it was released without one.
 */
export class KeyReleased extends Schema.TaggedClass<KeyReleased>()("KeyReleased", {
  partnerId: PartnerId,
  key: IdempotencyKeyValue,
  status: Schema.NullOr(Schema.Int),
  at: Schema.DateTimeUtc,
}) {}

/** The key's lifetime ended: it is no longer honoured, and a new request with it starts afresh. */
export class KeyExpired extends Schema.TaggedClass<KeyExpired>()("KeyExpired", {
  partnerId: PartnerId,
  key: IdempotencyKeyValue,
  at: Schema.DateTimeUtc,
}) {}

/** Every event of an idempotency key's stream. */
export type IdempotencyKeyEvent = KeyClaimed | ResponseRecorded | KeyReleased | KeyExpired

/** How idempotency key events are stored and read back. */
export const idempotencyKeyEvents = eventCatalog([KeyClaimed, ResponseRecorded, KeyReleased, KeyExpired])

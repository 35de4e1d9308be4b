import { Schema } from "effect"
import { EventId, PartnerId } from "./ids.js"

/**
 * What the store records beside every event: who caused it and why, so that any balance or status can be
 * explained from the log alone. Kept apart from the event payload, which says only what happened.
 */
export class EventMetadata extends Schema.Class<EventMetadata>("EventMetadata")({
  /** The event's own id (UUID v7). */
  eventId: EventId,
  /** The tenant the event belongs to. */
  partnerId: PartnerId,
  /** The `X-Request-Id` of the request that caused it, if a request did. */
  requestId: Schema.NullOr(Schema.String),
  /** The `Idempotency-Key` (as received, or the random one used in its place). */
  idempotencyKey: Schema.NullOr(Schema.String),
  /** The id of the message (event or command) that directly caused this event. */
  causationId: Schema.NullOr(Schema.String),
  /** The id shared by every message of one business conversation (e.g. an order and its fulfilment). */
  correlationId: Schema.NullOr(Schema.String),
  /** When the event happened, read from Effect's Clock. */
  occurredAt: Schema.DateTimeUtc,
}) {}

import { Schema } from "effect"
import { eventCatalog } from "../shared/event-catalog.js"
import { PartnerId, SigningSecretId, WebhookEndpointId } from "../shared/ids.js"
import { Description } from "../shared/text.js"
import { PublicEventType } from "./event-types.js"
import { WebhookUrl } from "./url.js"

/** Why the platform disabled an endpoint: the receiver answered 410 Gone, or deliveries failed for 5 days. */
export const DisabledReason = Schema.Literal("gone", "failing")
export type DisabledReason = typeof DisabledReason.Type

/** A partner registered a webhook endpoint; an empty `eventTypes` subscribes it to every type. */
export class WebhookEndpointCreated extends Schema.TaggedClass<WebhookEndpointCreated>()(
  "WebhookEndpointCreated",
  {
    endpointId: WebhookEndpointId,
    partnerId: PartnerId,
    url: WebhookUrl,
    eventTypes: Schema.Array(PublicEventType),
    description: Schema.NullOr(Description),
    enabled: Schema.Boolean,
    secretId: SigningSecretId,
    at: Schema.DateTimeUtc,
  },
) {}

/** The endpoint's settings changed; the event carries the full new values. */
export class WebhookEndpointUpdated extends Schema.TaggedClass<WebhookEndpointUpdated>()(
  "WebhookEndpointUpdated",
  {
    endpointId: WebhookEndpointId,
    url: WebhookUrl,
    eventTypes: Schema.Array(PublicEventType),
    description: Schema.NullOr(Description),
    enabled: Schema.Boolean,
    at: Schema.DateTimeUtc,
  },
) {}

/**
 * The endpoint got a new signing secret; the replaced one keeps signing until `previousValidUntil`, and any
 * secret replaced before it stops now.
 */
export class WebhookSecretRotated extends Schema.TaggedClass<WebhookSecretRotated>()("WebhookSecretRotated", {
  endpointId: WebhookEndpointId,
  secretId: SigningSecretId,
  previousSecretId: SigningSecretId,
  previousValidUntil: Schema.DateTimeUtc,
  at: Schema.DateTimeUtc,
}) {}

/** The platform stopped delivering to the endpoint; the partner can enable it again. */
export class WebhookEndpointDisabled extends Schema.TaggedClass<WebhookEndpointDisabled>()(
  "WebhookEndpointDisabled",
  {
    endpointId: WebhookEndpointId,
    reason: DisabledReason,
    at: Schema.DateTimeUtc,
  },
) {}

/** The partner deleted the endpoint; it is gone for good. */
export class WebhookEndpointDeleted extends Schema.TaggedClass<WebhookEndpointDeleted>()(
  "WebhookEndpointDeleted",
  {
    endpointId: WebhookEndpointId,
    at: Schema.DateTimeUtc,
  },
) {}

/** Every event of a webhook endpoint's stream. */
export type WebhookEndpointEvent =
  | WebhookEndpointCreated
  | WebhookEndpointUpdated
  | WebhookSecretRotated
  | WebhookEndpointDisabled
  | WebhookEndpointDeleted

/** How webhook endpoint events are stored and read back. */
export const webhookEndpointEvents = eventCatalog([
  WebhookEndpointCreated,
  WebhookEndpointUpdated,
  WebhookSecretRotated,
  WebhookEndpointDisabled,
  WebhookEndpointDeleted,
])

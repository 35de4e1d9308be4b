import { Schema } from "effect"
import { GracePeriodSeconds } from "../shared/grace-period.js"
import { PartnerId, SigningSecretId, WebhookEndpointId } from "../shared/ids.js"
import { Description } from "../shared/text.js"
import { PublicEventType } from "./event-types.js"
import { DisabledReason } from "./events.js"
import { WebhookUrl } from "./url.js"

/**
 * The most webhook endpoints a partner may have at once. Every public event is delivered to each of them, so
 * the bound keeps what one partner's events cost the shared fan-out and dispatch in proportion.
 */
export const MAX_WEBHOOK_ENDPOINTS = 20

/**
 * Register a webhook endpoint under a fresh id, with the reference of its first signing secret;
 * `allowPrivateTargets` is the platform's setting at the time (WEBHOOK_ALLOW_PRIVATE_TARGETS), and
 * `endpointsOfPartner` how many endpoints the partner has, counted where no other creation can race it.
 */
export class CreateEndpoint extends Schema.TaggedClass<CreateEndpoint>()("CreateEndpoint", {
  endpointId: WebhookEndpointId,
  partnerId: PartnerId,
  url: WebhookUrl,
  eventTypes: Schema.Array(PublicEventType),
  description: Schema.NullOr(Description),
  enabled: Schema.Boolean,
  secretId: SigningSecretId,
  allowPrivateTargets: Schema.Boolean,
  endpointsOfPartner: Schema.NonNegativeInt,
}) {}

/** Change an endpoint's settings; an absent field keeps its value, a `null` description clears it. */
export class UpdateEndpoint extends Schema.TaggedClass<UpdateEndpoint>()("UpdateEndpoint", {
  endpointId: WebhookEndpointId,
  url: Schema.optional(WebhookUrl),
  eventTypes: Schema.optional(Schema.Array(PublicEventType)),
  description: Schema.optional(Schema.NullOr(Description)),
  enabled: Schema.optional(Schema.Boolean),
  allowPrivateTargets: Schema.Boolean,
}) {}

/**
 * Give an endpoint a new signing secret; the one it replaces keeps signing for the grace period (24 h by
 * default), and one replaced earlier stops at once.
 */
export class RotateEndpointSecret extends Schema.TaggedClass<RotateEndpointSecret>()("RotateEndpointSecret", {
  endpointId: WebhookEndpointId,
  secretId: SigningSecretId,
  gracePeriodSeconds: GracePeriodSeconds,
}) {}

/** Stop delivering to an endpoint: it answered 410 Gone, or has been failing for 5 days (the dispatcher's command). */
export class DisableEndpoint extends Schema.TaggedClass<DisableEndpoint>()("DisableEndpoint", {
  endpointId: WebhookEndpointId,
  reason: DisabledReason,
}) {}

/** Delete an endpoint for good. */
export class DeleteEndpoint extends Schema.TaggedClass<DeleteEndpoint>()("DeleteEndpoint", {
  endpointId: WebhookEndpointId,
}) {}

/** Every command a webhook endpoint accepts. */
export type WebhookEndpointCommand =
  | CreateEndpoint
  | UpdateEndpoint
  | RotateEndpointSecret
  | DisableEndpoint
  | DeleteEndpoint

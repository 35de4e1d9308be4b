import { DateTime } from "effect"
import type { PartnerId, SigningSecretId, WebhookEndpointId } from "../shared/ids.js"
import type { PublicEventType } from "./event-types.js"
import type { DisabledReason } from "./events.js"
import type { WebhookUrl } from "./url.js"

/** A signing secret replaced by a rotation, still signing until `validUntil`. */
export interface PreviousSigningSecret {
  readonly secretId: SigningSecretId
  readonly validUntil: DateTime.Utc
}

/** An endpoint that exists, as its stream describes it. */
export interface LiveEndpoint {
  readonly _tag: "Live"
  readonly endpointId: WebhookEndpointId
  readonly partnerId: PartnerId
  readonly url: WebhookUrl
  /** The subscribed types, each once, in canonical order; empty means every type. */
  readonly eventTypes: ReadonlyArray<PublicEventType>
  readonly description: string | null
  readonly enabled: boolean
  /** Why the platform disabled it; null when enabled, or disabled by the partner. */
  readonly disabledReason: DisabledReason | null
  readonly secretId: SigningSecretId
  /**
   * The secret the last rotation replaced; at most one, so a rotation within a grace period ends the older
   * one's at once (one signature per secret rides in every delivery's header, which receivers bound).
   */
  readonly previousSecret: PreviousSigningSecret | null
  readonly createdAt: DateTime.Utc
  readonly updatedAt: DateTime.Utc
  /** Grows with every event. */
  readonly version: number
}

/** An endpoint that was deleted; it answers nothing any more. */
export interface DeletedEndpoint {
  readonly _tag: "Deleted"
  readonly endpointId: WebhookEndpointId
  readonly partnerId: PartnerId
  readonly deletedAt: DateTime.Utc
}

/** The state of a webhook endpoint's stream: nothing yet, a live endpoint, or a deleted one. */
export type WebhookEndpointState = { readonly _tag: "Absent" } | LiveEndpoint | DeletedEndpoint

/** The state before the first event. */
export const absent: WebhookEndpointState = { _tag: "Absent" }

/**
 * The signing secrets deliveries are signed with at `now`: the current one, then the one the last rotation
 * replaced while its grace period lasts (Standard Webhooks sends one signature per secret); none for a
 * deleted or absent endpoint.
 */
export const signingSecretIds = (
  state: WebhookEndpointState,
  now: DateTime.Utc,
): ReadonlyArray<SigningSecretId> => {
  if (state._tag !== "Live") return []
  const previous = state.previousSecret
  return previous !== null && DateTime.lessThan(now, previous.validUntil)
    ? [state.secretId, previous.secretId]
    : [state.secretId]
}

/** True when events of this type are delivered to the endpoint: it exists, is enabled and subscribes to the type. */
export const subscribesTo = (state: WebhookEndpointState, type: PublicEventType): boolean =>
  state._tag === "Live" && state.enabled && (state.eventTypes.length === 0 || state.eventTypes.includes(type))

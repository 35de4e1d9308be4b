import { invariant, unknownEvent } from "../shared/decider.js"
import type { WebhookEndpointEvent } from "./events.js"
import type { LiveEndpoint, WebhookEndpointState } from "./state.js"

const live = (state: WebhookEndpointState, event: WebhookEndpointEvent): LiveEndpoint => {
  invariant(state._tag === "Live", `${event._tag} while the endpoint is ${state._tag}`)
  invariant(state.endpointId === event.endpointId, `${event._tag} of another endpoint in the stream`)
  return state
}

/** Applies one event to a webhook endpoint's state. */
export const evolve = (state: WebhookEndpointState, event: WebhookEndpointEvent): WebhookEndpointState => {
  switch (event._tag) {
    case "WebhookEndpointCreated":
      invariant(state._tag === "Absent", "WebhookEndpointCreated twice in one stream")
      return {
        _tag: "Live",
        endpointId: event.endpointId,
        partnerId: event.partnerId,
        url: event.url,
        eventTypes: event.eventTypes,
        description: event.description,
        enabled: event.enabled,
        disabledReason: null,
        secretId: event.secretId,
        previousSecret: null,
        createdAt: event.at,
        updatedAt: event.at,
        version: 1,
      }
    case "WebhookEndpointUpdated": {
      const endpoint = live(state, event)
      return {
        ...endpoint,
        url: event.url,
        eventTypes: event.eventTypes,
        description: event.description,
        enabled: event.enabled,
        // Re-enabling clears the platform's reason; other changes to a disabled endpoint keep it.
        disabledReason: event.enabled ? null : endpoint.disabledReason,
        updatedAt: event.at,
        version: endpoint.version + 1,
      }
    }
    case "WebhookSecretRotated": {
      const endpoint = live(state, event)
      return {
        ...endpoint,
        secretId: event.secretId,
        // Only the secret just replaced keeps signing: an older one still in its grace period stops here.
        previousSecret: { secretId: event.previousSecretId, validUntil: event.previousValidUntil },
        updatedAt: event.at,
        version: endpoint.version + 1,
      }
    }
    case "WebhookEndpointDisabled": {
      const endpoint = live(state, event)
      invariant(endpoint.enabled, "WebhookEndpointDisabled on a disabled endpoint")
      return {
        ...endpoint,
        enabled: false,
        disabledReason: event.reason,
        updatedAt: event.at,
        version: endpoint.version + 1,
      }
    }
    case "WebhookEndpointDeleted": {
      const endpoint = live(state, event)
      return {
        _tag: "Deleted",
        endpointId: endpoint.endpointId,
        partnerId: endpoint.partnerId,
        deletedAt: event.at,
      }
    }
    default:
      return unknownEvent(event)
  }
}

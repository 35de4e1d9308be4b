import { Effect } from "effect"
import { EndpointDisabled, ResourceNotFound } from "../errors/business-errors.js"
import type { WebhookEndpointId } from "../shared/ids.js"
import type { LiveEndpoint, WebhookEndpointState } from "./state.js"

/**
 * The endpoint a replay schedules attempts to, as its stream describes it: LE0002 when it is unknown or
 * deleted, LE0008 when it is disabled (by the partner or the platform). A disabled endpoint's attempts end at
 * once, unsent, so a replay to it would answer a count of events it never sends: it is refused instead, and
 * the partner enables the endpoint first.
 */
export const replayTarget = (
  state: WebhookEndpointState,
  endpointId: WebhookEndpointId,
): Effect.Effect<LiveEndpoint, ResourceNotFound | EndpointDisabled> => {
  if (state._tag !== "Live") {
    return Effect.fail(new ResourceNotFound({ resource: "webhook endpoint", id: endpointId }))
  }
  return state.enabled ? Effect.succeed(state) : Effect.fail(new EndpointDisabled({ endpointId }))
}

import type { Decider } from "../shared/decider.js"
import type { WebhookEndpointCommand } from "./commands.js"
import { decide, type WebhookEndpointError } from "./decide.js"
import type { WebhookEndpointEvent } from "./events.js"
import { evolve } from "./evolve.js"
import { absent, type WebhookEndpointState } from "./state.js"

export * from "./commands.js"
export type { WebhookEndpointError } from "./decide.js"
export * from "./event-types.js"
export * from "./events.js"
export * from "./public-event-subject.js"
export * from "./replay-target.js"
export * from "./state.js"
export * from "./url.js"
export { decide, evolve }

/** A partner's webhook endpoint: created, updated, its secret rotated, disabled by the platform, deleted. */
export const decider: Decider<
  WebhookEndpointCommand,
  WebhookEndpointEvent,
  WebhookEndpointState,
  WebhookEndpointError
> = {
  initialState: absent,
  decide,
  evolve,
}

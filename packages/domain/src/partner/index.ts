import type { Decider } from "../shared/decider.js"
import type { PartnerCommand } from "./commands.js"
import { decide } from "./decide.js"
import type { PartnerEvent } from "./events.js"
import { evolve } from "./evolve.js"
import { type PartnerState, unregistered } from "./state.js"

export * from "./commands.js"
export * from "./events.js"
export * from "./state.js"
export { decide, evolve }

/** A partner, the tenant every resource belongs to: registered once, under a fresh id. */
export const decider: Decider<PartnerCommand, PartnerEvent, PartnerState, never> = {
  initialState: unregistered,
  decide,
  evolve,
}

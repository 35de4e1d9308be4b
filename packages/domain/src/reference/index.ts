import type { Decider } from "../shared/decider.js"
import type { ReferenceCommand } from "./commands.js"
import { decide, type ReservationError } from "./decide.js"
import type { ReferenceEvent } from "./events.js"
import { evolve } from "./evolve.js"
import { type ReferenceState, unreserved } from "./state.js"

export * from "./commands.js"
export type { ReservationError } from "./decide.js"
export * from "./events.js"
export * from "./state.js"
export { decide, evolve }

/** A partner's reference id of one kind (transaction or order): taken once, by the first record that claims it. */
export const decider: Decider<ReferenceCommand, ReferenceEvent, ReferenceState, ReservationError> = {
  initialState: unreserved,
  decide,
  evolve,
}

import type { Decider } from "../shared/decider.js"
import type { UserCommand } from "./commands.js"
import { decide, type UserError } from "./decide.js"
import type { UserEvent } from "./events.js"
import { evolve } from "./evolve.js"
import { type UserState, unregistered } from "./state.js"

export * from "./commands.js"
export { ensureStandingWritable, ensureWritable, type UserError } from "./decide.js"
export * from "./events.js"
export * from "./snapshot.js"
export * from "./state.js"
export { decide, evolve }

/** A partner's user: registered as processing, activated, updated, closed. */
export const decider: Decider<UserCommand, UserEvent, UserState, UserError> = {
  initialState: unregistered,
  decide,
  evolve,
}

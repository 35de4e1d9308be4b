import type { Decider } from "../shared/decider.js"
import type { CredentialCommand } from "./commands.js"
import { type CredentialError, decide } from "./decide.js"
import type { CredentialEvent } from "./events.js"
import { evolve } from "./evolve.js"
import { type CredentialState, unissued } from "./state.js"

export * from "./commands.js"
export type { CredentialError } from "./decide.js"
export * from "./events.js"
export * from "./secret-hash.js"
export * from "./state.js"
export { decide, evolve }

/** A partner's client credential: issued, its secret rotated with a grace period, revoked for good. */
export const decider: Decider<CredentialCommand, CredentialEvent, CredentialState, CredentialError> = {
  initialState: unissued,
  decide,
  evolve,
}

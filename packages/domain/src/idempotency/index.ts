import type { Decider } from "../shared/decider.js"
import type { IdempotencyKeyCommand } from "./commands.js"
import { decide, type IdempotencyKeyError } from "./decide.js"
import type { IdempotencyKeyEvent } from "./events.js"
import { evolve } from "./evolve.js"
import { type IdempotencyKeyState, unclaimed } from "./state.js"

export * from "./claim-decision.js"
export * from "./commands.js"
export type { IdempotencyKeyError } from "./decide.js"
export * from "./events.js"
export * from "./fingerprint.js"
export * from "./key.js"
export * from "./response.js"
export * from "./state.js"
export { decide, evolve }

/** A partner's idempotency key: claimed by one request, then completed with its response, released or expired. */
export const decider: Decider<
  IdempotencyKeyCommand,
  IdempotencyKeyEvent,
  IdempotencyKeyState,
  IdempotencyKeyError
> = {
  initialState: unclaimed,
  decide,
  evolve,
}

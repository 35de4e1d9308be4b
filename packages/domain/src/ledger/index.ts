import type { Decider } from "../shared/decider.js"
import type { LedgerCommand } from "./commands.js"
import { decide, type LedgerError } from "./decide.js"
import type { LedgerEvent } from "./events.js"
import { evolve } from "./evolve.js"
import { type LedgerState, noAccount } from "./state.js"

export * from "./commands.js"
export type { LedgerError } from "./decide.js"
export * from "./events.js"
export * from "./snapshot.js"
export * from "./state.js"
export * from "./transaction.js"
export { decide, evolve }

/** A user's points account: opened, credited, debited (also for orders), refunded, closed with its user. */
export const decider: Decider<LedgerCommand, LedgerEvent, LedgerState, LedgerError> = {
  initialState: noAccount,
  decide,
  evolve,
}

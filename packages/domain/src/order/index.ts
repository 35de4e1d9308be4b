import type { Decider } from "../shared/decider.js"
import type { OrderCommand } from "./commands.js"
import { decide, type OrderError } from "./decide.js"
import type { OrderEvent } from "./events.js"
import { evolve } from "./evolve.js"
import { notPlaced, type OrderState } from "./state.js"

export * from "./commands.js"
export type { OrderError } from "./decide.js"
export * from "./events.js"
export * from "./items.js"
export * from "./sandbox-fulfilment.js"
export * from "./state.js"
export { decide, evolve }

/** An order paid in points: placed pending, then processing and completed or failed, or cancelled while pending. */
export const decider: Decider<OrderCommand, OrderEvent, OrderState, OrderError> = {
  initialState: notPlaced,
  decide,
  evolve,
}

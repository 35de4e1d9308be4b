import { invariant, unknownEvent } from "../shared/decider.js"
import type { ReferenceEvent } from "./events.js"
import type { ReferenceState } from "./state.js"

/** Applies one event to a reference id's state. */
export const evolve = (state: ReferenceState, event: ReferenceEvent): ReferenceState => {
  // One event type: TypeScript narrows no further than the type itself, hence `as never`.
  if (event._tag !== "ReferenceReserved") return unknownEvent(event as never)
  invariant(state._tag === "Unreserved", "ReferenceReserved twice in one stream")
  return {
    _tag: "Reserved",
    partnerId: event.partnerId,
    kind: event.kind,
    referenceId: event.referenceId,
    recordId: event.recordId,
    reservedAt: event.at,
  }
}

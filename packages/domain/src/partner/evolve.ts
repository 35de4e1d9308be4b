import { invariant, unknownEvent } from "../shared/decider.js"
import type { PartnerEvent } from "./events.js"
import type { PartnerState } from "./state.js"

/** Applies one event to a partner's state. */
export const evolve = (state: PartnerState, event: PartnerEvent): PartnerState => {
  switch (event._tag) {
    case "PartnerRegistered":
      invariant(state._tag === "Unregistered", "PartnerRegistered twice in one stream")
      return { _tag: "Registered", partnerId: event.partnerId, name: event.name, createdAt: event.at }
    default:
      // One event type: TypeScript narrows no further than the type itself, hence `as never`.
      return unknownEvent(event as never)
  }
}

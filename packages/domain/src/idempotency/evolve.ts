import { invariant, unknownEvent } from "../shared/decider.js"
import type { IdempotencyKeyEvent } from "./events.js"
import { type ClaimedKey, type IdempotencyKeyState, isLive } from "./state.js"

const claimed = (state: IdempotencyKeyState, event: IdempotencyKeyEvent): ClaimedKey => {
  invariant(state._tag === "Claimed", `${event._tag} while the key is ${state._tag}`)
  return state
}

/** Applies one event to an idempotency key's state. */
export const evolve = (state: IdempotencyKeyState, event: IdempotencyKeyEvent): IdempotencyKeyState => {
  invariant(
    state._tag === "Unclaimed" || (state.partnerId === event.partnerId && state.key === event.key),
    `${event._tag} of another key in the stream`,
  )
  switch (event._tag) {
    case "KeyClaimed":
      invariant(state._tag !== "Completed", "KeyClaimed on a completed key")
      invariant(state._tag !== "Claimed" || event.takeover, "KeyClaimed on a claimed key without a takeover")
      return {
        _tag: "Claimed",
        partnerId: event.partnerId,
        key: event.key,
        fingerprint: event.fingerprint,
        firstReceivedAt: event.firstReceivedAt,
        expiresAt: event.expiresAt,
        leaseExpiresAt: event.leaseExpiresAt,
      }
    case "ResponseRecorded": {
      const { leaseExpiresAt: _, ...key } = claimed(state, event)
      return { ...key, _tag: "Completed", response: event.response }
    }
    case "KeyReleased": {
      const { leaseExpiresAt: _, ...key } = claimed(state, event)
      return { ...key, _tag: "Released" }
    }
    case "KeyExpired":
      invariant(isLive(state), `KeyExpired while the key is ${state._tag}`)
      return { _tag: "Expired", partnerId: event.partnerId, key: event.key, expiredAt: event.at }
    default:
      return unknownEvent(event)
  }
}

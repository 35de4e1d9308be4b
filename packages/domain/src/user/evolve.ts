import { invariant, unknownEvent } from "../shared/decider.js"
import type { UserEvent } from "./events.js"
import type { RegisteredUser, UserState } from "./state.js"

const registered = (
  state: UserState,
  event: Exclude<UserEvent, { _tag: "UserRegistered" }>,
): RegisteredUser => {
  invariant(state._tag === "Registered", `${event._tag} before UserRegistered`)
  invariant(state.userId === event.userId, `${event._tag} of another user in the stream`)
  return state
}

/** Applies one event to a user's state. */
export const evolve = (state: UserState, event: UserEvent): UserState => {
  switch (event._tag) {
    case "UserRegistered":
      invariant(state._tag === "Unregistered", "UserRegistered twice in one stream")
      return {
        _tag: "Registered",
        userId: event.userId,
        partnerId: event.partnerId,
        partnerUserId: event.partnerUserId,
        email: event.email,
        name: event.name,
        status: "processing",
        pointsAccountId: null,
        createdAt: event.at,
        updatedAt: event.at,
        version: 1,
      }
    case "UserActivated": {
      const user = registered(state, event)
      invariant(user.status === "processing", `UserActivated while ${user.status}`)
      return { ...user, status: "active", updatedAt: event.at, version: user.version + 1 }
    }
    case "UserDetailsChanged": {
      const user = registered(state, event)
      invariant(user.status === "active", `UserDetailsChanged while ${user.status}`)
      return { ...user, email: event.email, name: event.name, updatedAt: event.at, version: user.version + 1 }
    }
    case "PointsAccountLinked": {
      const user = registered(state, event)
      invariant(user.status === "active", `PointsAccountLinked while ${user.status}`)
      invariant(user.pointsAccountId === null, "PointsAccountLinked to a user that has an account")
      return { ...user, pointsAccountId: event.accountId, updatedAt: event.at, version: user.version + 1 }
    }
    case "UserClosed": {
      const user = registered(state, event)
      invariant(user.status === "active", `UserClosed while ${user.status}`)
      return { ...user, status: "closed", updatedAt: event.at, version: user.version + 1 }
    }
    default:
      return unknownEvent(event)
  }
}

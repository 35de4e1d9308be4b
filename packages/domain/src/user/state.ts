import { type DateTime, Schema } from "effect"
import type { AccountId, PartnerId, UserId } from "../shared/ids.js"
import type { Email, PartnerUserId } from "../shared/text.js"

/** A user's lifecycle: processing until activated, then active until closed. */
export type UserStatus = "processing" | "active" | "closed"

/** A user that exists, as its stream describes it. */
export interface RegisteredUser {
  readonly _tag: "Registered"
  readonly userId: UserId
  readonly partnerId: PartnerId
  readonly partnerUserId: PartnerUserId
  readonly email: Email
  readonly name: string | null
  readonly status: UserStatus
  /** The user's points account, once one is opened (a user has at most one). */
  readonly pointsAccountId: AccountId | null
  readonly createdAt: DateTime.Utc
  readonly updatedAt: DateTime.Utc
  /** Grows with every event; published as the resource's `version`. */
  readonly version: number
}

/** The state of a user's stream: nothing yet, or a registered user. */
export type UserState = { readonly _tag: "Unregistered" } | RegisteredUser

/** The state before the first event. */
export const unregistered: UserState = { _tag: "Unregistered" }

/**
 * A user's status as other aggregates see it when a write concerns the user (its points, its orders):
 * `unregistered` when no such user exists for the partner.
 */
export const UserStanding = Schema.Literal("unregistered", "processing", "active", "closed")
export type UserStanding = typeof UserStanding.Type

/** The standing of a user state, to carry into commands of other aggregates. */
export const standingOf = (state: UserState): UserStanding =>
  state._tag === "Registered" ? state.status : "unregistered"

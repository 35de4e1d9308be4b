import type { DateTime } from "effect"
import type { PartnerId, UserId } from "../shared/ids.js"
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
  readonly createdAt: DateTime.Utc
  readonly updatedAt: DateTime.Utc
  /** Grows with every event; published as the resource's `version`. */
  readonly version: number
}

/** The state of a user's stream: nothing yet, or a registered user. */
export type UserState = { readonly _tag: "Unregistered" } | RegisteredUser

/** The state before the first event. */
export const unregistered: UserState = { _tag: "Unregistered" }

import { Schema } from "effect"
import { AccountId, PartnerId, UserId } from "../shared/ids.js"
import { Email, PartnerUserId } from "../shared/text.js"
import type { UserState } from "./state.js"

const RegisteredUserSnapshot = Schema.TaggedStruct("Registered", {
  userId: UserId,
  partnerId: PartnerId,
  partnerUserId: PartnerUserId,
  email: Email,
  name: Schema.NullOr(Schema.String),
  status: Schema.Literal("processing", "active", "closed"),
  pointsAccountId: Schema.NullOr(AccountId),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc,
  version: Schema.Int,
})

const UserStateSnapshotUnion = Schema.Union(Schema.TaggedStruct("Unregistered", {}), RegisteredUserSnapshot)

/**
 * A user state as JSON, so a store can keep it beside the stream and load a user without folding its
 * history. Rename `USER_SNAPSHOT` whenever `evolve` changes what a state holds.
 */
export const UserStateSnapshot: Schema.Schema<UserState, typeof UserStateSnapshotUnion.Encoded> =
  UserStateSnapshotUnion

/** The name (and revision) of the user's snapshot format. */
export const USER_SNAPSHOT = "user/2"

import { Schema } from "effect"
import { AccountId, PartnerId, UserId } from "../shared/ids.js"
import { DisplayName, Email, PartnerUserId } from "../shared/text.js"

/** Register a partner's user (status processing). */
export class RegisterUser extends Schema.TaggedClass<RegisterUser>()("RegisterUser", {
  userId: UserId,
  partnerId: PartnerId,
  partnerUserId: PartnerUserId,
  email: Email,
  name: Schema.NullOr(DisplayName),
}) {}

/** Finish processing a user (done by a consumer of the event log). */
export class ActivateUser extends Schema.TaggedClass<ActivateUser>()("ActivateUser", {
  userId: UserId,
}) {}

/** Change a user's e-mail and/or name; an absent field keeps its value, a `null` name clears it. */
export class UpdateUser extends Schema.TaggedClass<UpdateUser>()("UpdateUser", {
  userId: UserId,
  email: Schema.optional(Email),
  name: Schema.optional(Schema.NullOr(DisplayName)),
}) {}

/** Close a user for good. */
export class CloseUser extends Schema.TaggedClass<CloseUser>()("CloseUser", {
  userId: UserId,
}) {}

/** Name the user's newly opened points account on the user (decided with the ledger's AccountOpened). */
export class LinkPointsAccount extends Schema.TaggedClass<LinkPointsAccount>()("LinkPointsAccount", {
  userId: UserId,
  accountId: AccountId,
  /** When the account opened: the user changed at that moment too. */
  openedAt: Schema.DateTimeUtc,
}) {}

/** Every command a user accepts. */
export type UserCommand = RegisterUser | ActivateUser | UpdateUser | LinkPointsAccount | CloseUser

import { Schema } from "effect"
import { eventCatalog } from "../shared/event-catalog.js"
import { AccountId, PartnerId, UserId } from "../shared/ids.js"
import { DisplayName, Email, PartnerUserId } from "../shared/text.js"

/** A partner registered one of its users; the account is being processed until activated. */
export class UserRegistered extends Schema.TaggedClass<UserRegistered>()("UserRegistered", {
  userId: UserId,
  partnerId: PartnerId,
  partnerUserId: PartnerUserId,
  email: Email,
  name: Schema.NullOr(DisplayName),
  at: Schema.DateTimeUtc,
}) {}

/** Processing finished: the user may now be written to. */
export class UserActivated extends Schema.TaggedClass<UserActivated>()("UserActivated", {
  userId: UserId,
  at: Schema.DateTimeUtc,
}) {}

/** The user's contact details changed; the event carries the full new values. */
export class UserDetailsChanged extends Schema.TaggedClass<UserDetailsChanged>()("UserDetailsChanged", {
  userId: UserId,
  email: Email,
  name: Schema.NullOr(DisplayName),
  at: Schema.DateTimeUtc,
}) {}

/** The user was closed; it takes no further writes, and its points account closes with it. */
export class UserClosed extends Schema.TaggedClass<UserClosed>()("UserClosed", {
  userId: UserId,
  at: Schema.DateTimeUtc,
}) {}

/**
 * The user's points account was opened (explicitly, or by the first Add points): the user names it from now
 * on. Appended with the ledger's AccountOpened, in one unit of work, so the user's version grows with it.
 */
export class PointsAccountLinked extends Schema.TaggedClass<PointsAccountLinked>()("PointsAccountLinked", {
  userId: UserId,
  accountId: AccountId,
  at: Schema.DateTimeUtc,
}) {}

/** Every event of a user's stream. */
export type UserEvent = UserRegistered | UserActivated | UserDetailsChanged | PointsAccountLinked | UserClosed

/** How user events are stored and read back. */
export const userEvents = eventCatalog([
  UserRegistered,
  UserActivated,
  UserDetailsChanged,
  PointsAccountLinked,
  UserClosed,
])

import { Schema } from "effect"
import { AccountId, OrderId, TransactionId, UserId } from "../shared/ids.js"
import { Points } from "../shared/points.js"
import { Description, ReferenceId } from "../shared/text.js"
import { UserStanding } from "../user/state.js"

/** Open a points account for a user (the explicit way; the first AddPoints also opens one). */
export class OpenAccount extends Schema.TaggedClass<OpenAccount>()("OpenAccount", {
  userId: UserId,
  accountId: AccountId,
  /** The account holder's status as the caller read it. */
  holder: UserStanding,
}) {}

/** Credit points; `accountId` names the account only when this opens it. */
export class AddPoints extends Schema.TaggedClass<AddPoints>()("AddPoints", {
  userId: UserId,
  accountId: AccountId,
  transactionId: TransactionId,
  amount: Points,
  referenceId: ReferenceId,
  description: Schema.NullOr(Description),
  holder: UserStanding,
}) {}

/** Write points off an open account, never below zero. */
export class SubtractPoints extends Schema.TaggedClass<SubtractPoints>()("SubtractPoints", {
  userId: UserId,
  transactionId: TransactionId,
  amount: Points,
  referenceId: ReferenceId,
  description: Schema.NullOr(Description),
  holder: UserStanding,
}) {}

/** Pay an order's total from an open account, never below zero; the order is placed, and debited, once. */
export class DebitForOrder extends Schema.TaggedClass<DebitForOrder>()("DebitForOrder", {
  userId: UserId,
  orderId: OrderId,
  transactionId: TransactionId,
  amount: Points,
  /** The order's reference id, which its debit transaction carries. */
  referenceId: ReferenceId,
  holder: UserStanding,
}) {}

/** Pay back an order's whole debit when it is cancelled or failed; the order makes sure that happens once. */
export class RefundOrder extends Schema.TaggedClass<RefundOrder>()("RefundOrder", {
  userId: UserId,
  orderId: OrderId,
  transactionId: TransactionId,
  /** The order's total, which its debit took. */
  amount: Points,
  /** The order's reference id, which its refund transaction carries again. */
  referenceId: ReferenceId,
}) {}

/** Close the account together with its user; closing twice, or without an account, does nothing. */
export class CloseAccount extends Schema.TaggedClass<CloseAccount>()("CloseAccount", {
  userId: UserId,
}) {}

/** Every command a points account accepts. */
export type LedgerCommand =
  | OpenAccount
  | AddPoints
  | SubtractPoints
  | DebitForOrder
  | RefundOrder
  | CloseAccount

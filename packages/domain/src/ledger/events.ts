import { Schema } from "effect"
import { eventCatalog } from "../shared/event-catalog.js"
import { AccountId, OrderId, TransactionId, UserId } from "../shared/ids.js"
import { Points, PointsBalance } from "../shared/points.js"
import { Description, ReferenceId } from "../shared/text.js"

/** A user's points account was opened, explicitly or by the first points added; it starts at zero. */
export class AccountOpened extends Schema.TaggedClass<AccountOpened>()("AccountOpened", {
  accountId: AccountId,
  userId: UserId,
  at: Schema.DateTimeUtc,
}) {}

/** The partner credited points to the account (transaction type `add`). */
export class PointsAdded extends Schema.TaggedClass<PointsAdded>()("PointsAdded", {
  transactionId: TransactionId,
  accountId: AccountId,
  userId: UserId,
  amount: Points,
  balanceAfter: PointsBalance,
  referenceId: ReferenceId,
  description: Schema.NullOr(Description),
  at: Schema.DateTimeUtc,
}) {}

/** The partner wrote points off the account (transaction type `subtract`). */
export class PointsSubtracted extends Schema.TaggedClass<PointsSubtracted>()("PointsSubtracted", {
  transactionId: TransactionId,
  accountId: AccountId,
  userId: UserId,
  amount: Points,
  balanceAfter: PointsBalance,
  referenceId: ReferenceId,
  description: Schema.NullOr(Description),
  at: Schema.DateTimeUtc,
}) {}

/** An order's total was paid from the account (transaction type `order_debit`, the order's reference id). */
export class OrderDebited extends Schema.TaggedClass<OrderDebited>()("OrderDebited", {
  transactionId: TransactionId,
  accountId: AccountId,
  userId: UserId,
  orderId: OrderId,
  amount: Points,
  balanceAfter: PointsBalance,
  referenceId: ReferenceId,
  at: Schema.DateTimeUtc,
}) {}

/** A cancelled or failed order's debit was paid back in full (transaction type `order_refund`). */
export class OrderRefunded extends Schema.TaggedClass<OrderRefunded>()("OrderRefunded", {
  transactionId: TransactionId,
  accountId: AccountId,
  userId: UserId,
  orderId: OrderId,
  amount: Points,
  balanceAfter: PointsBalance,
  referenceId: ReferenceId,
  at: Schema.DateTimeUtc,
}) {}

/** The account closed with its user; it keeps its balance and still takes refunds of earlier orders. */
export class AccountClosed extends Schema.TaggedClass<AccountClosed>()("AccountClosed", {
  accountId: AccountId,
  userId: UserId,
  at: Schema.DateTimeUtc,
}) {}

/** An event that moves points: each one is an immutable transaction of the account. */
export type MovementEvent = PointsAdded | PointsSubtracted | OrderDebited | OrderRefunded

/** Every event of a points account's stream. */
export type LedgerEvent = AccountOpened | MovementEvent | AccountClosed

/** How points account events are stored and read back. */
export const ledgerEvents = eventCatalog([
  AccountOpened,
  PointsAdded,
  PointsSubtracted,
  OrderDebited,
  OrderRefunded,
  AccountClosed,
])

import { Schema } from "effect"
import { AccountId, OrderId, TransactionId, UserId } from "../shared/ids.js"
import { Points, PointsBalance } from "../shared/points.js"
import { Description, ReferenceId } from "../shared/text.js"
import type { MovementEvent } from "./events.js"

/** What a transaction did to the balance, as published. */
export const TransactionType = Schema.Literal("add", "subtract", "order_debit", "order_refund")
export type TransactionType = typeof TransactionType.Type

/** One immutable movement on a points account, as the transaction resource publishes it. */
export const PointsTransaction = Schema.Struct({
  transactionId: TransactionId,
  accountId: AccountId,
  userId: UserId,
  type: TransactionType,
  amount: Points,
  balanceAfter: PointsBalance,
  referenceId: ReferenceId,
  description: Schema.NullOr(Description),
  orderId: Schema.NullOr(OrderId),
  createdAt: Schema.DateTimeUtc,
})
export type PointsTransaction = typeof PointsTransaction.Type

/** The transaction record a movement event stands for. */
export const transactionOf = (event: MovementEvent): PointsTransaction => {
  const common = {
    transactionId: event.transactionId,
    accountId: event.accountId,
    userId: event.userId,
    amount: event.amount,
    balanceAfter: event.balanceAfter,
    referenceId: event.referenceId,
    createdAt: event.at,
  }
  switch (event._tag) {
    case "PointsAdded":
      return { ...common, type: "add", description: event.description, orderId: null }
    case "PointsSubtracted":
      return { ...common, type: "subtract", description: event.description, orderId: null }
    case "OrderDebited":
      return { ...common, type: "order_debit", description: null, orderId: event.orderId }
    case "OrderRefunded":
      return { ...common, type: "order_refund", description: null, orderId: event.orderId }
  }
}

import { type DateTime, HashMap } from "effect"
import type { AccountId, OrderId, TransactionId, UserId } from "../shared/ids.js"
import type { Points, PointsBalance } from "../shared/points.js"
import type { ReferenceId } from "../shared/text.js"

/** What the account paid for an order: what a refund of that order pays back, and whether one did. */
export interface OrderDebit {
  readonly transactionId: TransactionId
  readonly amount: Points
  /** The order's reference id, carried again by the refund transaction. */
  readonly referenceId: ReferenceId
  /** The refund transaction, once the order was refunded. */
  readonly refundTransactionId: TransactionId | null
}

/** A user's points account, open or closed, as its stream describes it. */
export interface PointsAccount {
  readonly _tag: "Open" | "Closed"
  readonly accountId: AccountId
  readonly userId: UserId
  readonly balance: PointsBalance
  readonly createdAt: DateTime.Utc
  readonly updatedAt: DateTime.Utc
  /** Grows with every event. */
  readonly version: number
  /**
   * Every order debit of the account, by order, refunded or not; one map rather than open debits plus a set
   * of refunded orders, so that a refund is one persistent update and "never debited" stays tellable apart.
   */
  readonly orderDebits: HashMap.HashMap<OrderId, OrderDebit>
}

/** The state of a points account's stream: no account yet, or the account. */
export type LedgerState = { readonly _tag: "NoAccount" } | PointsAccount

/** The state before the first event. */
export const noAccount: LedgerState = { _tag: "NoAccount" }

/** True when the account has already been debited for the order (refunded since or not). */
export const hasDebited = (account: PointsAccount, orderId: OrderId): boolean =>
  HashMap.has(account.orderDebits, orderId)

/** The order debits not refunded yet, computed on demand (O(n): for reads and tests, not for evolve). */
export const openOrderDebits = (account: PointsAccount): HashMap.HashMap<OrderId, OrderDebit> =>
  HashMap.filter(account.orderDebits, (debit) => debit.refundTransactionId === null)

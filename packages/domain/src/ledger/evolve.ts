import { type DateTime, HashMap, Option } from "effect"
import { invariant } from "../shared/decider.js"
import type { OrderId } from "../shared/ids.js"
import { type PointsBalance, zeroBalance } from "../shared/points.js"
import type { LedgerEvent, MovementEvent } from "./events.js"
import type { LedgerState, OrderDebit, PointsAccount } from "./state.js"

// evolve runs once per stored event on every replay (a long-lived account has hundreds of thousands), so it
// does constant work plus at most one persistent-map update (O(log n)); nothing here copies a collection.
// The next state is written out field by field: object spread is several times slower on V8.

const accountOf = (state: LedgerState, event: LedgerEvent): PointsAccount => {
  invariant(state._tag !== "NoAccount", "an event before AccountOpened")
  invariant(
    state.accountId === event.accountId && state.userId === event.userId,
    "an event of another account in the stream",
  )
  return state
}

const openAccountOf = (state: LedgerState, event: LedgerEvent): PointsAccount => {
  const account = accountOf(state, event)
  invariant(account._tag === "Open", "a movement on a closed account")
  return account
}

const next = (
  account: PointsAccount,
  tag: PointsAccount["_tag"],
  balance: PointsBalance,
  at: DateTime.Utc,
  orderDebits: HashMap.HashMap<OrderId, OrderDebit>,
): PointsAccount => ({
  _tag: tag,
  accountId: account.accountId,
  userId: account.userId,
  balance,
  createdAt: account.createdAt,
  updatedAt: at,
  version: account.version + 1,
  orderDebits,
})

const moved = (
  account: PointsAccount,
  event: MovementEvent,
  expected: number,
  orderDebits: HashMap.HashMap<OrderId, OrderDebit>,
): PointsAccount => {
  invariant(event.balanceAfter === expected, "a balance after that does not follow from the amount")
  invariant(event.balanceAfter >= 0, "a negative balance")
  return next(account, account._tag, event.balanceAfter, event.at, orderDebits)
}

/** Applies one event to a points account's state. */
export const evolve = (state: LedgerState, event: LedgerEvent): LedgerState => {
  switch (event._tag) {
    case "AccountOpened":
      invariant(state._tag === "NoAccount", "AccountOpened twice in one stream")
      return {
        _tag: "Open",
        accountId: event.accountId,
        userId: event.userId,
        balance: zeroBalance,
        createdAt: event.at,
        updatedAt: event.at,
        version: 1,
        orderDebits: HashMap.empty(),
      }
    case "PointsAdded": {
      const account = openAccountOf(state, event)
      return moved(account, event, account.balance + event.amount, account.orderDebits)
    }
    case "PointsSubtracted": {
      const account = openAccountOf(state, event)
      return moved(account, event, account.balance - event.amount, account.orderDebits)
    }
    case "OrderDebited": {
      const account = openAccountOf(state, event)
      const debit: OrderDebit = {
        transactionId: event.transactionId,
        amount: event.amount,
        referenceId: event.referenceId,
        refundTransactionId: null,
      }
      // One traversal of the map both checks and records, instead of a lookup followed by an insert.
      const orderDebits = HashMap.modifyAt(account.orderDebits, event.orderId, (previous) => {
        invariant(Option.isNone(previous), "an order debited twice")
        return Option.some(debit)
      })
      return moved(account, event, account.balance - event.amount, orderDebits)
    }
    case "OrderRefunded": {
      // Refunds land on closed accounts too: the points of an order that never happened always go back.
      const account = accountOf(state, event)
      const orderDebits = HashMap.modifyAt(account.orderDebits, event.orderId, (debit) => {
        invariant(Option.isSome(debit), "a refund of an order never debited")
        invariant(debit.value.refundTransactionId === null, "an order refunded twice")
        invariant(debit.value.amount === event.amount, "a refund of another amount than the debit")
        return Option.some<OrderDebit>({
          transactionId: debit.value.transactionId,
          amount: debit.value.amount,
          referenceId: debit.value.referenceId,
          refundTransactionId: event.transactionId,
        })
      })
      return moved(account, event, account.balance + event.amount, orderDebits)
    }
    case "AccountClosed": {
      const account = openAccountOf(state, event)
      return next(account, "Closed", account.balance, event.at, account.orderDebits)
    }
  }
}

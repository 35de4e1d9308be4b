import type { DateTime } from "effect"
import { invariant, unknownEvent } from "../shared/decider.js"
import { type PointsBalance, zeroBalance } from "../shared/points.js"
import type { LedgerEvent, MovementEvent } from "./events.js"
import type { LedgerState, PointsAccount } from "./state.js"

// evolve runs once per stored event on every replay (a long-lived account has hundreds of thousands), so it
// does constant work and allocates only the next state; the state holds no collection that could grow.
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
  outstandingOrderDebits: number,
): PointsAccount => ({
  _tag: tag,
  accountId: account.accountId,
  userId: account.userId,
  balance,
  createdAt: account.createdAt,
  updatedAt: at,
  version: account.version + 1,
  outstandingOrderDebits,
})

const moved = (
  account: PointsAccount,
  event: MovementEvent,
  expected: number,
  outstandingOrderDebits: number,
): PointsAccount => {
  invariant(event.balanceAfter === expected, "a balance after that does not follow from the amount")
  invariant(event.balanceAfter >= 0, "a negative balance")
  return next(account, account._tag, event.balanceAfter, event.at, outstandingOrderDebits)
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
        outstandingOrderDebits: 0,
      }
    case "PointsAdded": {
      const account = openAccountOf(state, event)
      return moved(account, event, account.balance + event.amount, account.outstandingOrderDebits)
    }
    case "PointsSubtracted": {
      const account = openAccountOf(state, event)
      return moved(account, event, account.balance - event.amount, account.outstandingOrderDebits)
    }
    case "OrderDebited": {
      const account = openAccountOf(state, event)
      return moved(
        account,
        event,
        account.balance - event.amount,
        account.outstandingOrderDebits + event.amount,
      )
    }
    case "OrderRefunded": {
      // Refunds land on closed accounts too: the points of an order that never happened always go back.
      const account = accountOf(state, event)
      const outstanding = account.outstandingOrderDebits - event.amount
      invariant(outstanding >= 0, "a refund larger than the outstanding order debits")
      return moved(account, event, account.balance + event.amount, outstanding)
    }
    case "AccountClosed": {
      const account = openAccountOf(state, event)
      return next(account, "Closed", account.balance, event.at, account.outstandingOrderDebits)
    }
    default:
      return unknownEvent(event)
  }
}

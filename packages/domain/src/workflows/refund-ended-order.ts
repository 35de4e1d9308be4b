import { DateTime, Effect } from "effect"
import * as Ledger from "../ledger/index.js"
import type * as Order from "../order/index.js"
import type { TransactionId } from "../shared/ids.js"
import { atInstant } from "../shared/one-instant.js"

/** What ending an order (cancelling or failing it) reads: the order's stream and its buyer's account. */
export interface EndOrderState {
  readonly ledger: Ledger.LedgerState
  readonly order: Order.OrderState
}

/** The events ending an order appends, per stream, in one transaction. */
export interface EndOrderEvents {
  readonly order: ReadonlyArray<Order.OrderEvent>
  readonly ledger: ReadonlyArray<Ledger.LedgerEvent>
}

/**
 * Pairs the order events that end an order with the refund of its points. No status change, no refund:
 * points go back only with the event that explains why. That transition happens once (failed and cancelled
 * are exclusive final states), so an order is refunded at most once, for exactly the total its debit took,
 * at the instant the order ended.
 */
export const refundEndedOrder = (
  state: EndOrderState,
  order: ReadonlyArray<Order.OrderEvent>,
  refundTransactionId: TransactionId,
): Effect.Effect<EndOrderEvents, Ledger.LedgerError> => {
  const ended = order.at(-1)
  if (ended === undefined || state.order._tag !== "Placed") return Effect.succeed({ order, ledger: [] })
  const placed = state.order
  const refund = Ledger.decide(
    Ledger.RefundOrder.make({
      userId: placed.userId,
      orderId: placed.orderId,
      transactionId: refundTransactionId,
      amount: placed.totalPoints,
      referenceId: placed.referenceId,
    }),
    state.ledger,
  )
  return Effect.map(atInstant(DateTime.toEpochMillis(ended.at))(refund), (ledger) => ({ order, ledger }))
}

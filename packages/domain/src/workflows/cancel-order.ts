import { Effect } from "effect"
import * as Ledger from "../ledger/index.js"
import * as Order from "../order/index.js"
import type { OrderId, TransactionId } from "../shared/ids.js"

/** What cancelling an order reads: the order's stream and its buyer's points account. */
export interface CancelOrderState {
  readonly ledger: Ledger.LedgerState
  readonly order: Order.OrderState
}

/** The partner's request to cancel a pending order; the refund, if any, gets `refundTransactionId`. */
export interface CancelOrderInput {
  readonly orderId: OrderId
  readonly refundTransactionId: TransactionId
}

/** The events cancelling an order appends, per stream, in one transaction. */
export interface CancelOrderEvents {
  readonly order: ReadonlyArray<Order.OrderEvent>
  readonly ledger: ReadonlyArray<Ledger.LedgerEvent>
}

/** Cancels a pending order and refunds its points to the buyer's account. */
export const cancelOrder = (
  state: CancelOrderState,
  input: CancelOrderInput,
): Effect.Effect<CancelOrderEvents, Order.OrderError | Ledger.LedgerError> =>
  Effect.gen(function* () {
    const order = yield* Order.decide(Order.CancelOrder.make({ orderId: input.orderId }), state.order)
    // No status change, no refund: points go back only with the event that explains why. That transition
    // happens once (failed and cancelled are exclusive final states), so the order is refunded at most once,
    // for exactly the total its debit took.
    if (order.length === 0 || state.order._tag !== "Placed") return { order, ledger: [] }
    const ledger = yield* Ledger.decide(
      Ledger.RefundOrder.make({
        userId: state.order.userId,
        orderId: input.orderId,
        transactionId: input.refundTransactionId,
        amount: state.order.totalPoints,
        referenceId: state.order.referenceId,
      }),
      state.ledger,
    )
    return { order, ledger }
  })

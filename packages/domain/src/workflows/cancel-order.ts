import { Effect } from "effect"
import type * as Ledger from "../ledger/index.js"
import * as Order from "../order/index.js"
import type { OrderId, TransactionId } from "../shared/ids.js"
import { type EndOrderEvents, type EndOrderState, refundEndedOrder } from "./refund-ended-order.js"

/** The partner's request to cancel a pending order; the refund, if any, gets `refundTransactionId`. */
export interface CancelOrderInput {
  readonly orderId: OrderId
  readonly refundTransactionId: TransactionId
}

/** Cancels a pending order and refunds its points to the buyer's account. */
export const cancelOrder = (
  state: EndOrderState,
  input: CancelOrderInput,
): Effect.Effect<EndOrderEvents, Order.OrderError | Ledger.LedgerError> =>
  Effect.flatMap(
    Effect.suspend(() => Order.decide(Order.CancelOrder.make({ orderId: input.orderId }), state.order)),
    (order) => refundEndedOrder(state, order, input.refundTransactionId),
  )

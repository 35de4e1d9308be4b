import { Effect } from "effect"
import type * as Ledger from "../ledger/index.js"
import * as Order from "../order/index.js"
import type { OrderId, TransactionId } from "../shared/ids.js"
import { type EndOrderEvents, type EndOrderState, refundEndedOrder } from "./refund-ended-order.js"

/** Fulfilment's report that a processing order cannot be delivered; the refund gets `refundTransactionId`. */
export interface FailOrderInput {
  readonly orderId: OrderId
  readonly reason: string
  readonly refundTransactionId: TransactionId
}

/**
 * Marks a processing order failed and refunds its points; a redelivered failure does neither again. A
 * `reason` that is no Description (over 1,000 characters) is the caller's bug: the effect dies with it.
 */
export const failOrder = (
  state: EndOrderState,
  input: FailOrderInput,
): Effect.Effect<EndOrderEvents, Order.OrderError | Ledger.LedgerError> =>
  // Made when the effect runs, not when it is called: an invalid input fails the effect instead of throwing.
  Effect.flatMap(
    Effect.suspend(() =>
      Order.decide(Order.FailOrder.make({ orderId: input.orderId, reason: input.reason }), state.order),
    ),
    (order) => refundEndedOrder(state, order, input.refundTransactionId),
  )

import { Effect } from "effect"
import type * as Ledger from "../ledger/index.js"
import * as Order from "../order/index.js"
import type { OrderId, TransactionId } from "../shared/ids.js"
import { failOrder } from "./fail-order.js"
import type { EndOrderEvents, EndOrderState } from "./refund-ended-order.js"

/** The last fulfilment step for an order; a refund, if the order fails, gets `refundTransactionId`. */
export interface FinishFulfilmentInput {
  readonly orderId: OrderId
  readonly refundTransactionId: TransactionId
}

/**
 * Ends a processing order as the sandbox fulfils it: failed with its points refunded when an item's sku
 * starts with FAIL (Order.sandboxFailureOf), completed otherwise. A redelivery appends and refunds nothing.
 */
export const finishSandboxFulfilment = (
  state: EndOrderState,
  input: FinishFulfilmentInput,
): Effect.Effect<EndOrderEvents, Order.OrderError | Ledger.LedgerError> => {
  const reason = state.order._tag === "Placed" ? Order.sandboxFailureOf(state.order.items) : null
  if (reason !== null) return failOrder(state, { ...input, reason })
  return Effect.map(
    Effect.suspend(() => Order.decide(Order.CompleteOrder.make({ orderId: input.orderId }), state.order)),
    (order) => ({
      order,
      ledger: [],
    }),
  )
}

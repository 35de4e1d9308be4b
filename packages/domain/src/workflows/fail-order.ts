import { Effect } from "effect"
import * as Ledger from "../ledger/index.js"
import * as Order from "../order/index.js"
import type { OrderId, TransactionId } from "../shared/ids.js"

/** What failing an order reads: the order's stream and its buyer's points account. */
export interface FailOrderState {
  readonly ledger: Ledger.LedgerState
  readonly order: Order.OrderState
}

/** Fulfilment's report that a processing order cannot be delivered; the refund gets `refundTransactionId`. */
export interface FailOrderInput {
  readonly orderId: OrderId
  readonly reason: string
  readonly refundTransactionId: TransactionId
}

/** The events failing an order appends, per stream, in one transaction. */
export interface FailOrderEvents {
  readonly order: ReadonlyArray<Order.OrderEvent>
  readonly ledger: ReadonlyArray<Ledger.LedgerEvent>
}

/** Marks a processing order failed and refunds its points; a redelivered failure does neither again. */
export const failOrder = (
  state: FailOrderState,
  input: FailOrderInput,
): Effect.Effect<FailOrderEvents, Order.OrderError | Ledger.LedgerError> =>
  Effect.gen(function* () {
    const order = yield* Order.decide(
      Order.FailOrder.make({ orderId: input.orderId, reason: input.reason }),
      state.order,
    )
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

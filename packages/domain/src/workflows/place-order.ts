import { Effect } from "effect"
import * as Ledger from "../ledger/index.js"
import * as Order from "../order/index.js"
import { invariant } from "../shared/decider.js"
import { atOneInstant } from "../shared/one-instant.js"
import type { UserStanding } from "../user/state.js"

/** What placing an order reads: the buyer's standing, their points account and the new order's stream. */
export interface PlaceOrderState {
  readonly holder: UserStanding
  readonly ledger: Ledger.LedgerState
  readonly order: Order.OrderState
}

/** The events placing an order appends, per stream, in one transaction. */
export interface PlaceOrderEvents {
  readonly order: ReadonlyArray<Order.OrderEvent>
  readonly ledger: ReadonlyArray<Ledger.LedgerEvent>
}

/** Places an order and debits its total from the buyer's points account: both, or neither, at one instant. */
export const placeOrder = (
  state: PlaceOrderState,
  command: Order.PlaceOrder,
): Effect.Effect<PlaceOrderEvents, Order.OrderError | Ledger.LedgerError> =>
  atOneInstant(
    Effect.gen(function* () {
      // Placing an existing order breaks an invariant here, before any debit: each order is debited once.
      const order = yield* Order.decide(command, state.order)
      const placed = order.reduce(Order.evolve, state.order)
      invariant(placed._tag === "Placed", "PlaceOrder did not place the order")
      const ledger = yield* Ledger.decide(
        Ledger.DebitForOrder.make({
          userId: command.userId,
          orderId: command.orderId,
          transactionId: command.debitTransactionId,
          amount: placed.totalPoints,
          referenceId: command.referenceId,
          holder: state.holder,
        }),
        state.ledger,
      )
      return { order, ledger }
    }),
  )

import { invariant, unknownEvent } from "../shared/decider.js"
import { type OrderEvent, statusAfter } from "./events.js"
import { totalPointsOf } from "./items.js"
import { canTransition, type OrderState, type PlacedOrder } from "./state.js"

const moved = (state: OrderState, event: Exclude<OrderEvent, { _tag: "OrderPlaced" }>): PlacedOrder => {
  invariant(state._tag === "Placed", `${event._tag} before OrderPlaced`)
  invariant(state.orderId === event.orderId, `${event._tag} of another order in the stream`)
  const status = statusAfter(event)
  invariant(canTransition(state.status, status), `${event._tag} while ${state.status}`)
  return {
    ...state,
    status,
    statusHistory: [...state.statusHistory, { status, at: event.at }],
    updatedAt: event.at,
    version: state.version + 1,
  }
}

/** Applies one event to an order's state. */
export const evolve = (state: OrderState, event: OrderEvent): OrderState => {
  switch (event._tag) {
    case "OrderPlaced":
      invariant(state._tag === "NotPlaced", "OrderPlaced twice in one stream")
      // The total is what the order debits and what a cancel or failure refunds: it must be its lines' sum.
      invariant(
        event.totalPoints === totalPointsOf(event.items),
        "OrderPlaced with a total not its lines' sum",
      )
      return {
        _tag: "Placed",
        orderId: event.orderId,
        userId: event.userId,
        referenceId: event.referenceId,
        items: event.items,
        totalPoints: event.totalPoints,
        status: "pending",
        debitTransactionId: event.debitTransactionId,
        failureReason: null,
        statusHistory: [{ status: "pending", at: event.at }],
        createdAt: event.at,
        updatedAt: event.at,
        version: 1,
      }
    case "OrderFailed":
      return { ...moved(state, event), failureReason: event.reason }
    case "OrderProcessingStarted":
    case "OrderCompleted":
    case "OrderCancelled":
      return moved(state, event)
    default:
      return unknownEvent(event)
  }
}

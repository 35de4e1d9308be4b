import { DateTime, Effect } from "effect"
import { IllegalOrderTransition, ResourceNotFound } from "../errors/business-errors.js"
import { InvariantViolation, unknownCommand, validatedElsewhere } from "../shared/decider.js"
import { Points } from "../shared/points.js"
import type { OrderCommand } from "./commands.js"
import {
  OrderCancelled,
  OrderCompleted,
  type OrderEvent,
  OrderFailed,
  OrderPlaced,
  OrderProcessingStarted,
} from "./events.js"
import { totalPointsOf } from "./items.js"
import { canTransition, type OrderState, type OrderStatus, type PlacedOrder } from "./state.js"

/** The errors an order command can be refused with. */
export type OrderError = ResourceNotFound | IllegalOrderTransition

const existing = (state: OrderState, orderId: string): Effect.Effect<PlacedOrder, ResourceNotFound> =>
  state._tag === "Placed"
    ? Effect.succeed(state)
    : Effect.fail(new ResourceNotFound({ resource: "order", id: orderId }))

/**
 * Moves an order to a status: the event when the lifecycle allows it, nothing when `redelivered` says the
 * order is already there because of this same command, LE3001 otherwise.
 */
const move = (
  order: PlacedOrder,
  to: OrderStatus,
  redelivered: boolean,
  event: () => OrderEvent,
): Effect.Effect<ReadonlyArray<OrderEvent>, IllegalOrderTransition> => {
  if (redelivered && order.status === to) return Effect.succeed([])
  if (!canTransition(order.status, to)) {
    return Effect.fail(new IllegalOrderTransition({ orderId: order.orderId, from: order.status, to }))
  }
  return Effect.succeed([event()])
}

/** Decides an order command against the order's current state. */
export const decide = (
  command: OrderCommand,
  state: OrderState,
): Effect.Effect<ReadonlyArray<OrderEvent>, OrderError> =>
  Effect.gen(function* () {
    // The stream belongs to one order; a command for another order reaching it is a routing bug.
    if (state._tag === "Placed" && state.orderId !== command.orderId) {
      return yield* Effect.die(new InvariantViolation(`${command._tag} for another order`))
    }
    const at = yield* DateTime.now
    const { orderId } = command
    switch (command._tag) {
      case "PlaceOrder": {
        // Order ids are fresh UUID v7s minted per request (retries are caught by the idempotency key and the
        // reference id), so placing one id twice is a bug, not a retry.
        if (state._tag === "Placed")
          return yield* Effect.die(new InvariantViolation("order id already placed"))
        // The items schema caps the total at MAX_POINTS, so it is a valid amount to debit.
        const totalPoints = Points.make(totalPointsOf(command.items))
        return [
          OrderPlaced.make(
            {
              orderId,
              userId: command.userId,
              referenceId: command.referenceId,
              items: command.items,
              totalPoints,
              debitTransactionId: command.debitTransactionId,
              at,
            },
            validatedElsewhere,
          ),
        ]
      }
      case "StartProcessing": {
        const order = yield* existing(state, orderId)
        return yield* move(order, "processing", true, () =>
          OrderProcessingStarted.make({ orderId, at }, validatedElsewhere),
        )
      }
      case "CompleteOrder": {
        const order = yield* existing(state, orderId)
        return yield* move(order, "completed", true, () =>
          OrderCompleted.make({ orderId, at }, validatedElsewhere),
        )
      }
      case "FailOrder": {
        const order = yield* existing(state, orderId)
        return yield* move(order, "failed", true, () =>
          OrderFailed.make({ orderId, reason: command.reason, at }, validatedElsewhere),
        )
      }
      case "CancelOrder": {
        // A partner's cancel is answered, not absorbed: cancelling twice is LE3001 as published.
        const order = yield* existing(state, orderId)
        return yield* move(order, "cancelled", false, () =>
          OrderCancelled.make({ orderId, at }, validatedElsewhere),
        )
      }
      default:
        return yield* unknownCommand(command)
    }
  })

import { Schema } from "effect"
import { eventCatalog } from "../shared/event-catalog.js"
import { OrderId, TransactionId, UserId } from "../shared/ids.js"
import { Points } from "../shared/points.js"
import { Description, ReferenceId } from "../shared/text.js"
import { OrderItems } from "./items.js"
import type { OrderStatus } from "./state.js"

/** A user placed an order (pending); its total was debited from the points account in the same step. */
export class OrderPlaced extends Schema.TaggedClass<OrderPlaced>()("OrderPlaced", {
  orderId: OrderId,
  userId: UserId,
  referenceId: ReferenceId,
  items: OrderItems,
  totalPoints: Points,
  debitTransactionId: TransactionId,
  at: Schema.DateTimeUtc,
}) {}

/** Fulfilment picked the order up. */
export class OrderProcessingStarted extends Schema.TaggedClass<OrderProcessingStarted>()(
  "OrderProcessingStarted",
  {
    orderId: OrderId,
    at: Schema.DateTimeUtc,
  },
) {}

/** Fulfilment delivered the order. */
export class OrderCompleted extends Schema.TaggedClass<OrderCompleted>()("OrderCompleted", {
  orderId: OrderId,
  at: Schema.DateTimeUtc,
}) {}

/** Fulfilment could not deliver the order; its points are refunded. */
export class OrderFailed extends Schema.TaggedClass<OrderFailed>()("OrderFailed", {
  orderId: OrderId,
  reason: Description,
  at: Schema.DateTimeUtc,
}) {}

/** The partner cancelled the order before fulfilment started; its points are refunded. */
export class OrderCancelled extends Schema.TaggedClass<OrderCancelled>()("OrderCancelled", {
  orderId: OrderId,
  at: Schema.DateTimeUtc,
}) {}

/** Every event of an order's stream. */
export type OrderEvent = OrderPlaced | OrderProcessingStarted | OrderCompleted | OrderFailed | OrderCancelled

/** The status an event leaves the order in. */
export const statusAfter = (event: OrderEvent): OrderStatus => {
  switch (event._tag) {
    case "OrderPlaced":
      return "pending"
    case "OrderProcessingStarted":
      return "processing"
    case "OrderCompleted":
      return "completed"
    case "OrderFailed":
      return "failed"
    case "OrderCancelled":
      return "cancelled"
  }
}

/** How order events are stored and read back. */
export const orderEvents = eventCatalog([
  OrderPlaced,
  OrderProcessingStarted,
  OrderCompleted,
  OrderFailed,
  OrderCancelled,
])

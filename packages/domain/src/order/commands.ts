import { Schema } from "effect"
import { OrderId, TransactionId, UserId } from "../shared/ids.js"
import { Description, ReferenceId } from "../shared/text.js"
import { OrderItems } from "./items.js"

/** Place an order paid in points; `debitTransactionId` is the id its debit will carry. */
export class PlaceOrder extends Schema.TaggedClass<PlaceOrder>()("PlaceOrder", {
  orderId: OrderId,
  userId: UserId,
  referenceId: ReferenceId,
  items: OrderItems,
  debitTransactionId: TransactionId,
}) {}

/** Fulfilment picks a pending order up; a redelivery does nothing. */
export class StartProcessing extends Schema.TaggedClass<StartProcessing>()("StartProcessing", {
  orderId: OrderId,
}) {}

/** Fulfilment delivered a processing order; a redelivery does nothing. */
export class CompleteOrder extends Schema.TaggedClass<CompleteOrder>()("CompleteOrder", {
  orderId: OrderId,
}) {}

/** Fulfilment gave up on a processing order, for a reason; a redelivery does nothing. */
export class FailOrder extends Schema.TaggedClass<FailOrder>()("FailOrder", {
  orderId: OrderId,
  reason: Description,
}) {}

/** The partner cancels an order that is still pending. */
export class CancelOrder extends Schema.TaggedClass<CancelOrder>()("CancelOrder", {
  orderId: OrderId,
}) {}

/** Every command an order accepts. */
export type OrderCommand = PlaceOrder | StartProcessing | CompleteOrder | FailOrder | CancelOrder

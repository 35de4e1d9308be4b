import { type DateTime, Schema } from "effect"
import type { OrderId, TransactionId, UserId } from "../shared/ids.js"
import type { Points } from "../shared/points.js"
import type { ReferenceId } from "../shared/text.js"
import type { OrderItem } from "./items.js"

/** Where an order is in its lifecycle; completed, failed and cancelled are final. */
export const OrderStatus = Schema.Literal("pending", "processing", "completed", "failed", "cancelled")
export type OrderStatus = typeof OrderStatus.Type

/** The status changes an order's lifecycle allows, from each status. */
export const legalTransitions: { readonly [From in OrderStatus]: ReadonlyArray<OrderStatus> } = {
  pending: ["processing", "cancelled"],
  processing: ["completed", "failed"],
  completed: [],
  failed: [],
  cancelled: [],
}

/** True when an order may move from one status to the other. */
export const canTransition = (from: OrderStatus, to: OrderStatus): boolean =>
  legalTransitions[from].includes(to)

/** One entry of an order's published status history. */
export interface StatusChange {
  readonly status: OrderStatus
  readonly at: DateTime.Utc
}

/** An order that was placed, as its stream describes it. */
export interface PlacedOrder {
  readonly _tag: "Placed"
  readonly orderId: OrderId
  readonly userId: UserId
  readonly referenceId: ReferenceId
  readonly items: ReadonlyArray<OrderItem>
  readonly totalPoints: Points
  readonly status: OrderStatus
  /** The ledger transaction that paid the order. */
  readonly debitTransactionId: TransactionId
  readonly failureReason: string | null
  /** Every status the order has been in, oldest first, starting with pending. */
  readonly statusHistory: ReadonlyArray<StatusChange>
  readonly createdAt: DateTime.Utc
  readonly updatedAt: DateTime.Utc
  /** Grows with every event. */
  readonly version: number
}

/** The state of an order's stream: nothing yet, or the placed order. */
export type OrderState = { readonly _tag: "NotPlaced" } | PlacedOrder

/** The state before the first event. */
export const notPlaced: OrderState = { _tag: "NotPlaced" }

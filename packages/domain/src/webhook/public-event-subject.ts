import type * as Ledger from "../ledger/index.js"
import type * as Order from "../order/index.js"
import type * as User from "../user/index.js"
import type { PublicEventType } from "./event-types.js"

/** The resource a public event carries as its `data`, as that resource's GET returns it. */
export type PublicResourceKind = "user" | "transaction" | "order"

/** What a domain event announces: its public type, and the resource (kind and id) whose state it carries. */
export interface PublicEventSubject {
  readonly type: PublicEventType
  readonly resource: PublicResourceKind
  readonly resourceId: string
}

/** The domain events that may be announced: those of the streams behind users, transactions and orders. */
export type AnnounceableEvent = User.UserEvent | Ledger.LedgerEvent | Order.OrderEvent

/**
 * The one mapping from domain events to public events: what partners learn by webhook and at `/api/events`,
 * or null for an event that is not announced. Contact-detail changes are not announced (no public type);
 * account openings and closings neither; an order's debit and refund are reported by the order's own
 * events (`order.created`, `order.status_changed`), so only the partner's own adds and subtracts are
 * `points.*` events.
 */
export const publicEventSubjectOf = (event: AnnounceableEvent): PublicEventSubject | null => {
  switch (event._tag) {
    case "UserRegistered":
      return { type: "user.created", resource: "user", resourceId: event.userId }
    case "UserActivated":
      return { type: "user.activated", resource: "user", resourceId: event.userId }
    case "UserClosed":
      return { type: "user.closed", resource: "user", resourceId: event.userId }
    case "UserDetailsChanged":
    case "PointsAccountLinked":
      return null
    case "PointsAdded":
      return { type: "points.added", resource: "transaction", resourceId: event.transactionId }
    case "PointsSubtracted":
      return { type: "points.subtracted", resource: "transaction", resourceId: event.transactionId }
    case "AccountOpened":
    case "AccountClosed":
    case "OrderDebited":
    case "OrderRefunded":
      return null
    case "OrderPlaced":
      return { type: "order.created", resource: "order", resourceId: event.orderId }
    case "OrderProcessingStarted":
    case "OrderCompleted":
    case "OrderFailed":
    case "OrderCancelled":
      return { type: "order.status_changed", resource: "order", resourceId: event.orderId }
  }
}

import { Schema } from "effect"
import * as Ledger from "../ledger/index.js"
import * as Order from "../order/index.js"
import * as WebhookEndpoint from "../webhook/index.js"
import { IsoTimestamp } from "./iso-timestamp.js"

// The resources as the API publishes them (DESIGN.md sections 2, 3 and 6): snake_case fields, ids as UUID
// strings, timestamps as ISO-8601 UTC strings. The read models return exactly these, so the HTTP layer can use
// the schemas as its success types unchanged. `version` grows with every change of a resource; webhooks carry
// it so a receiver can drop an older state that arrives late.

export { IsoTimestamp }

/** A partner's user, as `GET /api/users/{user_id}` returns it. */
export const UserResource = Schema.Struct({
  id: Schema.String,
  partner_user_id: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  status: Schema.Literal("processing", "active", "closed"),
  points_account_id: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  version: Schema.Int,
}).pipe(Schema.annotations({ identifier: "User" }))
export type UserResource = typeof UserResource.Type

/** A user's points account, as `GET /api/users/{user_id}/points-account` returns it. */
export const PointsAccountResource = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  balance: Schema.Int,
  status: Schema.Literal("open", "closed"),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  version: Schema.Int,
}).pipe(Schema.annotations({ identifier: "PointsAccount" }))
export type PointsAccountResource = typeof PointsAccountResource.Type

/** One immutable movement of a points account, as `GET /api/points/transactions/{id}` returns it. */
export const TransactionResource = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  user_id: Schema.String,
  type: Ledger.TransactionType,
  amount: Schema.Int,
  balance_after: Schema.Int,
  reference_id: Schema.String,
  description: Schema.NullOr(Schema.String),
  order_id: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  /** Always 1: a transaction never changes; present so that every resource a webhook carries has a version. */
  version: Schema.Int,
}).pipe(Schema.annotations({ identifier: "Transaction" }))
export type TransactionResource = typeof TransactionResource.Type

/** One line of an order. */
export const OrderItemResource = Schema.Struct({
  sku: Schema.String,
  name: Schema.NullOr(Schema.String),
  quantity: Schema.Int,
  points: Schema.Int,
}).pipe(Schema.annotations({ identifier: "OrderItem" }))
export type OrderItemResource = typeof OrderItemResource.Type

/** One entry of an order's status history. */
export const StatusChangeResource = Schema.Struct({
  status: Order.OrderStatus,
  at: IsoTimestamp,
}).pipe(Schema.annotations({ identifier: "OrderStatusChange" }))
export type StatusChangeResource = typeof StatusChangeResource.Type

/** An order paid in points, as `GET /api/orders/{order_id}` returns it. */
export const OrderResource = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  reference_id: Schema.String,
  status: Order.OrderStatus,
  items: Schema.Array(OrderItemResource),
  total_points: Schema.Int,
  debit_transaction_id: Schema.String,
  failure_reason: Schema.NullOr(Schema.String),
  status_history: Schema.Array(StatusChangeResource),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  version: Schema.Int,
}).pipe(Schema.annotations({ identifier: "Order" }))
export type OrderResource = typeof OrderResource.Type

/** A webhook endpoint without its secret (shown only on create and rotate, by the webhook service). */
export const WebhookEndpointResource = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  event_types: Schema.Array(WebhookEndpoint.PublicEventType),
  description: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  disabled_reason: Schema.NullOr(WebhookEndpoint.DisabledReason),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  version: Schema.Int,
}).pipe(Schema.annotations({ identifier: "WebhookEndpoint" }))
export type WebhookEndpointResource = typeof WebhookEndpointResource.Type

/** A webhook endpoint with its signing secret (`whsec_…`): the answer of create and rotate-secret only. */
export const WebhookEndpointWithSecretResource = Schema.Struct({
  ...WebhookEndpointResource.fields,
  secret: Schema.String,
}).pipe(Schema.annotations({ identifier: "WebhookEndpointWithSecret" }))
export type WebhookEndpointWithSecretResource = typeof WebhookEndpointWithSecretResource.Type

const publicEventOfTypes = <
  const Types extends readonly [WebhookEndpoint.PublicEventType, ...Array<WebhookEndpoint.PublicEventType>],
  A,
  I,
  R,
>(
  types: Types,
  data: Schema.Schema<A, I, R>,
  identifier: string,
) =>
  Schema.Struct({
    id: Schema.String,
    type: Schema.Literal(...types),
    timestamp: IsoTimestamp,
    data,
  }).pipe(Schema.annotations({ identifier }))

/**
 * A public event, as `/api/events` lists it and webhooks carry it: `id` (also the `webhook-id` header),
 * `type`, `timestamp` (when it happened) and `data`, the resource as its GET returned it right after the
 * change, with its `version`. One member per resource a type carries.
 */
export const PublicEventResource = Schema.Union(
  publicEventOfTypes(["user.created", "user.activated", "user.closed"], UserResource, "UserEvent"),
  publicEventOfTypes(["points.added", "points.subtracted"], TransactionResource, "PointsEvent"),
  publicEventOfTypes(["order.created", "order.status_changed"], OrderResource, "OrderEvent"),
).pipe(Schema.annotations({ identifier: "PublicEvent" }))
export type PublicEventResource = typeof PublicEventResource.Type

/** A partner, as the admin API returns it. */
export const PartnerResource = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  created_at: IsoTimestamp,
}).pipe(Schema.annotations({ identifier: "Partner" }))
export type PartnerResource = typeof PartnerResource.Type

/**
 * A client credential as the admin API lists it: never a secret, nor its hash. `previous_secret_valid_until`
 * is until when the secret its latest rotation replaced still gets tokens, null when none does (never
 * rotated, its grace period over, or the credential revoked); a rotation keeps only that one replaced secret.
 */
export const CredentialResource = Schema.Struct({
  client_id: Schema.String,
  name: Schema.NullOr(Schema.String),
  status: Schema.Literal("active", "revoked"),
  previous_secret_valid_until: Schema.NullOr(IsoTimestamp),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
}).pipe(Schema.annotations({ identifier: "ClientCredential" }))
export type CredentialResource = typeof CredentialResource.Type

/** The body of every list endpoint: one page of resources and the cursor of the next, null on the last. */
export const PageOf = <A, I, R>(resource: Schema.Schema<A, I, R>) =>
  Schema.Struct({ data: Schema.Array(resource), next_cursor: Schema.NullOr(Schema.String) })

/** One page of a list. */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly next_cursor: string | null
}
export * from "./webhook-delivery.js"

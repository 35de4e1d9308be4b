import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  boundedText,
  DisplayName,
  Limits,
  Order,
  OrderResource,
  PageOf,
  Points,
  ReferenceId,
  Sku,
} from "@points/domain"
import { Schema } from "effect"
import { ErrorAt } from "../api-error.js"
import { boundedArray, jsonBody } from "../body.js"
import {
  IdempotencyKeyHeader,
  keyRequiredInDocument,
  RequiredIdempotencyKeyHeader,
} from "../idempotency-header.js"
import { IdText, PathId, pageQuery, queryParams } from "../query.js"
import { Authentication } from "../security.js"

/** One line of Create order; `name` may be left out. */
export const OrderItemBody = Schema.Struct({
  sku: Sku,
  name: Schema.optionalWith(Schema.NullOr(DisplayName), { default: () => null }),
  quantity: Order.Quantity,
  points: Points,
}).pipe(Schema.annotations({ identifier: "OrderItemInput" }))

/** Body of Create order (with a mandatory `Idempotency-Key` header). */
export const CreateOrderBody = Schema.Struct({
  user_id: IdText,
  reference_id: ReferenceId,
  items: boundedArray(OrderItemBody, {
    min: Limits.itemsMin,
    max: Limits.itemsMax,
    message: `must hold ${Limits.itemsMin} to ${Limits.itemsMax} items`,
  }),
}).pipe(Schema.annotations({ identifier: "CreateOrder" }))

const orderPath = Schema.Struct({ order_id: PathId })

/** Query of Find orders. */
export const FindOrdersQuery = Schema.Struct({
  reference_id: Schema.optional(boundedText(Limits.referenceId, "ReferenceIdFilter")),
  user_id: Schema.optional(IdText),
  status: Schema.optional(Order.OrderStatus),
  ...pageQuery("orders"),
})

/** Orders paid in points. */
export class OrdersGroup extends HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.post("createOrder", "/api/orders")
      .setHeaders(RequiredIdempotencyKeyHeader)
      .annotate(OpenApi.Transform, keyRequiredInDocument)
      .setPayload(jsonBody(CreateOrderBody))
      .addSuccess(OrderResource, { status: 201 })
      .addError(ErrorAt[400])
      .addError(ErrorAt[404])
      .addError(ErrorAt[409])
      .addError(ErrorAt[422]),
  )
  .add(
    HttpApiEndpoint.get("getOrder", "/api/orders/:order_id")
      .setPath(orderPath)
      .addSuccess(OrderResource)
      .addError(ErrorAt[404]),
  )
  .add(
    HttpApiEndpoint.get("findOrders", "/api/orders")
      .setUrlParams(queryParams(FindOrdersQuery))
      .addSuccess(PageOf(OrderResource))
      .addError(ErrorAt[400]),
  )
  .add(
    HttpApiEndpoint.post("cancelOrder", "/api/orders/:order_id/cancel")
      .setHeaders(IdempotencyKeyHeader)
      .setPath(orderPath)
      .addSuccess(OrderResource)
      .addError(ErrorAt[404])
      .addError(ErrorAt[409])
      // The key with another request (IK1001).
      .addError(ErrorAt[422]),
  )
  .middleware(Authentication) {}

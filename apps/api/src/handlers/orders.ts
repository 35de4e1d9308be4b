import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { InvalidParams, Order, OrderResource } from "@points/domain"
import { PointsApi } from "@points/http-api"
import { cancelOrder, getOrderResource, listOrders, placeOrder } from "@points/infrastructure"
import { Effect, ParseResult, Schema } from "effect"
import { forPartner } from "../http/answer.js"
import { idempotentPost } from "../http/idempotent-post.js"
import { writeOptions } from "../http/write-options.js"

// The wire schema checks each line; the order as a whole (its total) is the domain's rule.
const orderItemsOf = (items: unknown) =>
  Schema.decodeUnknown(Order.OrderItems)(items).pipe(
    Effect.mapError(
      (error) =>
        new InvalidParams({
          field: "items",
          problem: ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "are invalid",
        }),
    ),
  )

/** Orders paid in points. */
export const OrdersLive = HttpApiBuilder.group(PointsApi, "orders", (handlers) =>
  handlers
    .handle(
      "createOrder",
      ({ payload }) =>
        idempotentPost({
          required: true,
          successStatus: 201,
          resource: OrderResource,
          run: (context) =>
            Effect.flatMap(orderItemsOf(payload.items), (items) =>
              placeOrder(context, { user_id: payload.user_id, reference_id: payload.reference_id, items }),
            ),
        }),
      writeOptions,
    )
    .handle("getOrder", ({ path }) => forPartner((context) => getOrderResource(context, path.order_id)))
    .handle("findOrders", ({ urlParams }) => forPartner((context) => listOrders(context, urlParams)))
    .handle(
      "cancelOrder",
      ({ path }) =>
        idempotentPost({
          required: false,
          successStatus: 200,
          resource: OrderResource,
          run: (context) => cancelOrder(context, path.order_id),
        }),
      writeOptions,
    ),
)

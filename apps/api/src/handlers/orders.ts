import { HttpApiBuilder } from "@effect/platform"
import { InvalidParams, Order, OrderResource } from "@points/domain"
import { CurrentPrincipal, PointsApi } from "@points/http-api"
import { cancelOrder, getOrderResource, listOrders, placeOrder } from "@points/infrastructure"
import { Effect, ParseResult, Schema } from "effect"
import { answer, contextOf } from "../http/answer.js"
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
        Effect.flatMap(CurrentPrincipal, (principal) =>
          idempotentPost({
            principal,
            required: true,
            successStatus: 201,
            resource: OrderResource,
            run: (context) =>
              Effect.flatMap(orderItemsOf(payload.items), (items) =>
                placeOrder(context, { user_id: payload.user_id, reference_id: payload.reference_id, items }),
              ),
          }),
        ),
      writeOptions,
    )
    .handle("getOrder", ({ path }) =>
      answer(
        Effect.flatMap(Effect.flatMap(CurrentPrincipal, contextOf), (context) =>
          getOrderResource(context, path.order_id),
        ),
      ),
    )
    .handle("findOrders", ({ urlParams }) =>
      answer(
        Effect.flatMap(Effect.flatMap(CurrentPrincipal, contextOf), (context) =>
          listOrders(context, urlParams),
        ),
      ),
    )
    .handle(
      "cancelOrder",
      ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          idempotentPost({
            principal,
            required: false,
            successStatus: 200,
            resource: OrderResource,
            run: (context) => cancelOrder(context, path.order_id),
          }),
        ),
      writeOptions,
    ),
)

import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { TransactionResource } from "@points/domain"
import { PointsApi } from "@points/http-api"
import {
  addPoints,
  addPointsPlan,
  anyUnitPlan,
  getTransactionResource,
  listTransactions,
  subtractPoints,
  subtractPointsPlan,
} from "@points/infrastructure"
import { Effect } from "effect"
import { forPartner } from "../http/answer.js"
import { idempotentPost } from "../http/idempotent-post.js"
import { writeOptions } from "../http/write-options.js"

/** Points movements and the transactions they record. */
export const PointsLive = HttpApiBuilder.group(PointsApi, "points", (handlers) =>
  handlers
    .handle(
      "addPoints",
      ({ payload }) =>
        idempotentPost({
          required: false,
          successStatus: 201,
          resource: TransactionResource,
          run: (context) => addPoints(context, payload.transaction),
          plan: (context) => Effect.map(addPointsPlan(context, payload.transaction), anyUnitPlan),
        }),
      writeOptions,
    )
    .handle(
      "subtractPoints",
      ({ payload }) =>
        idempotentPost({
          required: false,
          successStatus: 201,
          resource: TransactionResource,
          run: (context) => subtractPoints(context, payload.transaction),
          plan: (context) => Effect.map(subtractPointsPlan(context, payload.transaction), anyUnitPlan),
        }),
      writeOptions,
    )
    .handle("getTransaction", ({ path }) =>
      forPartner((context) => getTransactionResource(context, path.transaction_id)),
    )
    .handle("findTransactions", ({ urlParams }) =>
      forPartner((context) => listTransactions(context, urlParams)),
    ),
)

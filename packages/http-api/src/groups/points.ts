import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import {
  boundedText,
  Description,
  Limits,
  PageOf,
  Points,
  ReferenceId,
  TransactionResource,
} from "@points/domain"
import { Schema } from "effect"
import { ErrorAt } from "../api-error.js"
import { jsonBody } from "../body.js"
import { IdempotencyKeyHeader } from "../idempotency-header.js"
import { IdText, PathId, pageQuery, queryParams } from "../query.js"
import { Authentication } from "../security.js"

/** Body of Add points and Subtract points. */
export const PointsMovementBody = Schema.Struct({
  transaction: Schema.Struct({
    user_id: IdText,
    amount: Points,
    reference_id: ReferenceId,
    description: Schema.optional(Schema.NullOr(Description)),
  }),
}).pipe(Schema.annotations({ identifier: "PointsMovement" }))

/** Query of Find transactions. */
export const FindTransactionsQuery = Schema.Struct({
  // Held to the field's own length: a value no transaction can have is a 400 naming it, not an empty page.
  reference_id: Schema.optional(boundedText(Limits.referenceId, "ReferenceIdFilter")),
  user_id: Schema.optional(IdText),
  ...pageQuery("transactions"),
})

/** Points movements: add, subtract, and the transactions they record. */
export class PointsGroup extends HttpApiGroup.make("points")
  .add(
    HttpApiEndpoint.post("addPoints", "/api/points/add")
      .setHeaders(IdempotencyKeyHeader)
      .setPayload(jsonBody(PointsMovementBody))
      .addSuccess(TransactionResource, { status: 201 })
      .addError(ErrorAt[400])
      .addError(ErrorAt[404])
      .addError(ErrorAt[409])
      .addError(ErrorAt[422]),
  )
  .add(
    HttpApiEndpoint.post("subtractPoints", "/api/points/subtract")
      .setHeaders(IdempotencyKeyHeader)
      .setPayload(jsonBody(PointsMovementBody))
      .addSuccess(TransactionResource, { status: 201 })
      .addError(ErrorAt[400])
      .addError(ErrorAt[404])
      .addError(ErrorAt[409])
      .addError(ErrorAt[422]),
  )
  .add(
    HttpApiEndpoint.get("getTransaction", "/api/points/transactions/:transaction_id")
      .setPath(Schema.Struct({ transaction_id: PathId }))
      .addSuccess(TransactionResource)
      .addError(ErrorAt[404]),
  )
  .add(
    HttpApiEndpoint.get("findTransactions", "/api/points/transactions")
      .setUrlParams(queryParams(FindTransactionsQuery))
      .addSuccess(PageOf(TransactionResource))
      .addError(ErrorAt[400]),
  )
  .middleware(Authentication) {}

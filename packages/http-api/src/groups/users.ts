import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import {
  boundedText,
  DisplayName,
  Email,
  Limits,
  PageOf,
  PartnerUserId,
  PointsAccountResource,
  UserResource,
} from "@points/domain"
import { Schema } from "effect"
import { ErrorAt } from "../api-error.js"
import { jsonBody } from "../body.js"
import { IdempotencyKeyHeader } from "../idempotency-header.js"
import { PathId, pageQuery, queryParams } from "../query.js"
import { Authentication } from "../security.js"

/** Body of Create user. */
export const CreateUserBody = Schema.Struct({
  partner_user_id: PartnerUserId,
  email: Email,
  name: Schema.optional(Schema.NullOr(DisplayName)),
}).pipe(Schema.annotations({ identifier: "CreateUser" }))

/** Body of Update user: only the fields to change. */
export const UpdateUserBody = Schema.Struct({
  email: Schema.optional(Email),
  name: Schema.optional(Schema.NullOr(DisplayName)),
}).pipe(Schema.annotations({ identifier: "UpdateUser" }))

const userPath = Schema.Struct({ user_id: PathId })

/** Query of Find users. */
export const FindUsersQuery = Schema.Struct({
  partner_user_id: Schema.optional(boundedText(Limits.partnerUserId, "PartnerUserIdFilter")),
  ...pageQuery("users"),
})

/** Users and their points accounts. */
export class UsersGroup extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.post("createUser", "/api/users")
      .setHeaders(IdempotencyKeyHeader)
      .setPayload(jsonBody(CreateUserBody))
      .addSuccess(UserResource, { status: 201 })
      .addError(ErrorAt[400])
      .addError(ErrorAt[409])
      .addError(ErrorAt[422]),
  )
  .add(
    HttpApiEndpoint.get("getUser", "/api/users/:user_id")
      .setPath(userPath)
      .addSuccess(UserResource)
      .addError(ErrorAt[404]),
  )
  .add(
    HttpApiEndpoint.get("findUsers", "/api/users")
      .setUrlParams(queryParams(FindUsersQuery))
      .addSuccess(PageOf(UserResource))
      .addError(ErrorAt[400]),
  )
  .add(
    HttpApiEndpoint.patch("updateUser", "/api/users/:user_id")
      .setPath(userPath)
      .setPayload(jsonBody(UpdateUserBody))
      .addSuccess(UserResource)
      .addError(ErrorAt[400])
      .addError(ErrorAt[404])
      .addError(ErrorAt[409]),
  )
  .add(
    HttpApiEndpoint.del("closeUser", "/api/users/:user_id")
      .setPath(userPath)
      .addSuccess(UserResource)
      .addError(ErrorAt[404])
      .addError(ErrorAt[409]),
  )
  .add(
    HttpApiEndpoint.post("openPointsAccount", "/api/users/:user_id/points-account")
      .setHeaders(IdempotencyKeyHeader)
      .setPath(userPath)
      .addSuccess(PointsAccountResource, { status: 201 })
      .addError(ErrorAt[404])
      .addError(ErrorAt[409])
      // The key with another request (IK1001).
      .addError(ErrorAt[422]),
  )
  .add(
    HttpApiEndpoint.get("getPointsAccount", "/api/users/:user_id/points-account")
      .setPath(userPath)
      .addSuccess(PointsAccountResource)
      .addError(ErrorAt[404]),
  )
  .middleware(Authentication) {}

import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { PointsAccountResource, UserResource } from "@points/domain"
import { PointsApi } from "@points/http-api"
import {
  closeUser,
  getPointsAccountResource,
  getUserResource,
  listUsers,
  openPointsAccount,
  registerUser,
  updateUser,
} from "@points/infrastructure"
import { forPartner } from "../http/answer.js"
import { idempotentPost } from "../http/idempotent-post.js"
import { writeOptions } from "../http/write-options.js"

/** Users and their points accounts. */
export const UsersLive = HttpApiBuilder.group(PointsApi, "users", (handlers) =>
  handlers
    .handle(
      "createUser",
      ({ payload }) =>
        idempotentPost({
          required: false,
          successStatus: 201,
          resource: UserResource,
          run: (context) => registerUser(context, payload),
        }),
      writeOptions,
    )
    .handle("getUser", ({ path }) => forPartner((context) => getUserResource(context, path.user_id)))
    .handle("findUsers", ({ urlParams }) => forPartner((context) => listUsers(context, urlParams)))
    .handle(
      "updateUser",
      ({ path, payload }) => forPartner((context) => updateUser(context, path.user_id, payload)),
      writeOptions,
    )
    .handle(
      "closeUser",
      ({ path }) => forPartner((context) => closeUser(context, path.user_id)),
      writeOptions,
    )
    .handle(
      "openPointsAccount",
      ({ path }) =>
        idempotentPost({
          required: false,
          successStatus: 201,
          resource: PointsAccountResource,
          run: (context) => openPointsAccount(context, path.user_id),
        }),
      writeOptions,
    )
    .handle("getPointsAccount", ({ path }) =>
      forPartner((context) => getPointsAccountResource(context, path.user_id)),
    ),
)

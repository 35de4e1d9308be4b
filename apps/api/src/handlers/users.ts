import { HttpApiBuilder } from "@effect/platform"
import { PointsAccountResource, UserResource } from "@points/domain"
import { CurrentPrincipal, PointsApi } from "@points/http-api"
import {
  closeUser,
  getPointsAccountResource,
  getUserResource,
  listUsers,
  openPointsAccount,
  registerUser,
  updateUser,
} from "@points/infrastructure"
import { Effect } from "effect"
import { answer, contextOf } from "../http/answer.js"
import { idempotentPost } from "../http/idempotent-post.js"
import { writeOptions } from "../http/write-options.js"

/** Users and their points accounts. */
export const UsersLive = HttpApiBuilder.group(PointsApi, "users", (handlers) =>
  handlers
    .handle(
      "createUser",
      ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          idempotentPost({
            principal,
            required: false,
            successStatus: 201,
            resource: UserResource,
            run: (context) => registerUser(context, payload),
          }),
        ),
      writeOptions,
    )
    .handle("getUser", ({ path }) =>
      answer(
        Effect.flatMap(Effect.flatMap(CurrentPrincipal, contextOf), (context) =>
          getUserResource(context, path.user_id),
        ),
      ),
    )
    .handle("findUsers", ({ urlParams }) =>
      answer(
        Effect.flatMap(Effect.flatMap(CurrentPrincipal, contextOf), (context) =>
          listUsers(context, urlParams),
        ),
      ),
    )
    .handle(
      "updateUser",
      ({ path, payload }) =>
        answer(
          Effect.flatMap(Effect.flatMap(CurrentPrincipal, contextOf), (context) =>
            updateUser(context, path.user_id, payload),
          ),
        ),
      writeOptions,
    )
    .handle(
      "closeUser",
      ({ path }) =>
        answer(
          Effect.flatMap(Effect.flatMap(CurrentPrincipal, contextOf), (context) =>
            closeUser(context, path.user_id),
          ),
        ),
      writeOptions,
    )
    .handle(
      "openPointsAccount",
      ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          idempotentPost({
            principal,
            required: false,
            successStatus: 201,
            resource: PointsAccountResource,
            run: (context) => openPointsAccount(context, path.user_id),
          }),
        ),
      writeOptions,
    )
    .handle("getPointsAccount", ({ path }) =>
      answer(
        Effect.flatMap(Effect.flatMap(CurrentPrincipal, contextOf), (context) =>
          getPointsAccountResource(context, path.user_id),
        ),
      ),
    ),
)

import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import type { SqlClient } from "@effect/sql"
import { ApiError, PointsApi } from "@points/http-api"
import { Cause, Effect } from "effect"
import type { Settings } from "../config.js"
import {
  apiErrorOf,
  entryOf,
  isDatabaseUnreachable,
  isPlatformError,
  unavailable,
  unexpected,
  withOAuthFields,
} from "./api-error-of.js"
import { bodyWasNotUtf8 } from "./capped-request.js"
import { refusedBeforeHandler } from "./idempotent-post.js"
import { invalidParamsOf } from "./invalid-params.js"
import { pathOf } from "./request-context.js"
import { withWebhookTargetProblem } from "./webhook-target-problem.js"

/**
 * Turns every failure into the published error body: schema failures into 400 with one entry per field
 * (recorded under the request's Idempotency-Key, as every 400 is),
 * unknown routes into 404 NN1002, unreadable bodies into 400, domain errors into their code and status, and
 * anything else into 500 SV5000 (503 SV5003 when the database is out of reach), logged with its cause but
 * never shown: no stack trace or SQL reaches a client. Errors of the OAuth endpoints also carry RFC 6749 `error`.
 */
export const ErrorMiddlewareLive = HttpApiBuilder.middleware(
  PointsApi,
  // The database and the settings, for recording a refusal, are provided on that path alone: a middleware made
  // `withContext` would provide them around every request (an Effect.locally, ~26 runtime operations each).
  Effect.map(
    Effect.context<SqlClient.SqlClient | Settings>(),
    (context) => (app) =>
      app.pipe(
        Effect.catchAllCause((cause) => {
          // Squashed: the body reader reports an unreadable body as a defect, not as a typed failure.
          const squashed: unknown = Cause.squash(cause)
          {
            const error = squashed
            if (error instanceof ApiError) return Effect.fail(error)
            const tag = (error as { _tag?: string })._tag
            // Refused before the handler ran: recorded under the request's Idempotency-Key as any 400 is.
            if (tag === "HttpApiDecodeError") {
              return Effect.provide(
                Effect.flatMap(
                  withWebhookTargetProblem(invalidParamsOf(error as never)),
                  refusedBeforeHandler,
                ),
                context,
              )
            }
            if (tag === "RouteNotFound") {
              return Effect.fail(
                new ApiError({ status: 404, errors: [entryOf("NN1002", "route not found")] }),
              )
            }
            if (tag === "RequestError") {
              return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
                const incoming = NodeHttpServerRequest.toIncomingMessage(request)
                // A body that never arrived whole (its connection dropped, or closed at the server's stop) is
                // not a request the partner made: nothing is recorded under its key, so that its retry runs.
                if (!incoming.complete) {
                  return Effect.fail(
                    new ApiError({
                      status: 400,
                      errors: [entryOf("GH1006", "invalid params: the body did not arrive whole")],
                    }),
                  )
                }
                const unreadable = bodyWasNotUtf8(incoming)
                  ? "invalid params: the body is not valid UTF-8"
                  : "invalid params: the body is not valid JSON"
                const refusal = new ApiError({ status: 400, errors: [entryOf("GH1006", unreadable)] })
                return Effect.provide(refusedBeforeHandler(refusal), context)
              })
            }
            if (isPlatformError(error)) return Effect.fail(apiErrorOf(error))
            if (tag === "StreamVersionConflict") {
              // Still contended after the bounded retries: nothing was written; the client may retry shortly.
              return Effect.fail(unavailable())
            }
          }
          return Effect.zipRight(
            Effect.logError("request failed", cause),
            Effect.fail(isDatabaseUnreachable(squashed) ? unavailable() : unexpected()),
          )
        }),
        Effect.catchAll((error) =>
          Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
            Effect.fail(withOAuthFields(pathOf(request), error)),
          ),
        ),
      ),
  ),
)

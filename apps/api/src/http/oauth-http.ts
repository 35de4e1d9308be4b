import { Headers, HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { PointsApi } from "@points/http-api"
import { Effect } from "effect"
import { isOAuthPath } from "./api-error-of.js"
import { pathOf } from "./request-context.js"

const hasNoBody = (headers: Headers.Headers) =>
  (headers["content-length"] === undefined || headers["content-length"] === "0") &&
  headers["transfer-encoding"] === undefined

/**
 * A request to the OAuth endpoints with no body at all (the client authenticates with HTTP Basic, the grant
 * type is left out: DESIGN.md section 3) is read as the empty form it is, where @effect/platform would read
 * JSON `null`. (Their `Cache-Control: no-store` is the server middleware's, with the other common headers.)
 */
export const OAuthHttpLive = HttpApiBuilder.middleware(PointsApi, (app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    isOAuthPath(pathOf(request)) && hasNoBody(request.headers)
      ? Effect.provideService(
          app,
          HttpServerRequest.HttpServerRequest,
          request.modify({
            headers: Headers.set(request.headers, "content-type", "application/x-www-form-urlencoded"),
          }),
        )
      : app,
  ),
)

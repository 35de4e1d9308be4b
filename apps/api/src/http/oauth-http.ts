import {
  Headers,
  HttpApiBuilder,
  HttpApp,
  HttpMiddleware,
  HttpServerRequest,
  HttpServerResponse,
} from "@effect/platform"
import { PointsApi } from "@points/http-api"
import { Effect } from "effect"
import { isOAuthPath } from "./api-error-of.js"

const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const

const noStore = (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setHeaders(response, NO_STORE)

const isOAuthRequest = (request: HttpServerRequest.HttpServerRequest) =>
  isOAuthPath(request.url.split("?")[0] ?? request.url)

const hasNoBody = (headers: Headers.Headers) =>
  (headers["content-length"] === undefined || headers["content-length"] === "0") &&
  headers["transfer-encoding"] === undefined

/**
 * The OAuth endpoints' own HTTP rules, around the contract's handlers. A request with no body at all (the
 * client authenticates with HTTP Basic, the grant type is left out: DESIGN.md section 3) is read as the empty
 * form it is, where @effect/platform would read JSON `null`. Every answer, errors included, carries
 * `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 5.1): its pre-response handler is added after
 * the server middleware's, so it also marks the 413 that one answers when a chunked body goes over the limit.
 */
export const OAuthHttpLive = HttpApiBuilder.middleware(PointsApi, (app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if (!isOAuthRequest(request)) return app
    const read = hasNoBody(request.headers)
      ? Effect.provideService(
          app,
          HttpServerRequest.HttpServerRequest,
          request.modify({
            headers: Headers.set(request.headers, "content-type", "application/x-www-form-urlencoded"),
          }),
        )
      : app
    return Effect.zipRight(
      HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(noStore(response))),
      read,
    )
  }),
)

/**
 * `Cache-Control: no-store` and `Pragma: no-cache` on the answers of the OAuth endpoints that the server
 * middleware makes before routing (413 by Content-Length, 415): they pass no pre-response handler, and are
 * written once the middleware around them returns. Put it around the server middleware.
 */
export const oauthNoStoreBeforeRouting = HttpMiddleware.make((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    isOAuthRequest(request) ? Effect.map(app, noStore) : app,
  ),
)

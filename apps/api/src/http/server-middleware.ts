import {
  HttpApp,
  HttpIncomingMessage,
  HttpMiddleware,
  HttpServerRequest,
  HttpServerResponse,
} from "@effect/platform"
import { API_VERSION, ApiError } from "@points/http-api"
import { Effect, Option } from "effect"
import { v7 as uuidV7 } from "uuid"
import { entryOf } from "./api-error-of.js"
import { errorResponse } from "./error-response.js"
import { currentRequestId } from "./request-context.js"

/** The largest request body accepted (DESIGN.md section 2). */
export const MAX_BODY_BYTES = 1_048_576

// The routes that take a body, and the media types they take; every other route ignores a body.
const bodyRoutes: ReadonlyArray<readonly [string, RegExp, ReadonlyArray<string>]> = [
  ["POST", /^\/api\/oauth\/(token|revoke)$/, ["application/x-www-form-urlencoded", "application/json"]],
  ["POST", /^\/api\/users$/, ["application/json"]],
  ["PATCH", /^\/api\/users\/[^/]+$/, ["application/json"]],
  ["POST", /^\/api\/points\/(add|subtract)$/, ["application/json"]],
  ["POST", /^\/api\/orders$/, ["application/json"]],
  ["POST", /^\/admin\/api\/partners$/, ["application/json"]],
  ["POST", /^\/admin\/api\/partners\/[^/]+\/clients$/, ["application/json"]],
]

const acceptedTypes = (method: string, path: string) =>
  bodyRoutes.find(([m, pattern]) => m === method && pattern.test(path))?.[2]

const hasBody = (headers: Readonly<Record<string, string | undefined>>) =>
  (headers["content-length"] !== undefined && headers["content-length"] !== "0") ||
  headers["transfer-encoding"] !== undefined

const requestIdOf = (given: string | undefined) =>
  given !== undefined && /^[\x21-\x7e]{1,200}$/.test(given) ? given : uuidV7()

/**
 * Wraps every request, routed or not: gives it a request id (echoed as `X-Request-Id`) and `Api-Version`,
 * refuses bodies over 1 MiB (413 GH1008) and bodies of a media type the route does not take (415 GH1010)
 * before anything reads them, and caps what may be read at the same size.
 */
export const serverMiddleware = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = requestIdOf(request.headers["x-request-id"])
    const path = request.url.split("?")[0] ?? request.url
    const declaredLength = Number(request.headers["content-length"] ?? "0")
    const accepted = acceptedTypes(request.method, path)
    const contentType = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? ""

    // The server writes the response inside this middleware; headers are added on the way out by a
    // pre-response handler, which also sees the error responses made further in.
    yield* HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(
        HttpServerResponse.setHeaders(response, {
          "X-Request-Id": requestId,
          "Api-Version": API_VERSION,
          // An indeterminate 503 (database out of reach, contention) tells the client when to retry.
          ...(response.status === 503 && response.headers["retry-after"] === undefined
            ? { "Retry-After": "2" }
            : {}),
        }),
      ),
    )
    const response = yield* Number.isFinite(declaredLength) && declaredLength > MAX_BODY_BYTES
      ? errorResponse(
          new ApiError({
            status: 413,
            errors: [entryOf("GH1008", `payload too large: the limit is ${MAX_BODY_BYTES} bytes`)],
          }),
        )
      : accepted !== undefined && hasBody(request.headers) && !accepted.includes(contentType)
        ? errorResponse(
            new ApiError({
              status: 415,
              errors: [entryOf("GH1010", `unsupported media type: send ${accepted.join(" or ")}`)],
            }),
          )
        : app.pipe(
            // A body sent without Content-Length (chunked) is capped while it is read.
            HttpIncomingMessage.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
            Effect.locally(currentRequestId, requestId),
            Effect.annotateLogs({ request_id: requestId, method: request.method, path }),
          )
    return response
  }).pipe(Effect.annotateLogs({ service: "api" })),
)

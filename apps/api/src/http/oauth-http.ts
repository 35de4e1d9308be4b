import * as Headers from "@effect/platform/Headers"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { PointsApi } from "@points/http-api"
import { Cause, Effect } from "effect"
import { isOAuthPath } from "./api-error-of.js"
import { invalidParamsOf } from "./invalid-params.js"
import { pathOf } from "./request-context.js"

const FORM = "application/x-www-form-urlencoded"

const hasNoBody = (headers: Headers.Headers) =>
  (headers["content-length"] === undefined || headers["content-length"] === "0") &&
  headers["transfer-encoding"] === undefined

// The names given more than once in a form body (read again from the text the decoding already read).
const repeatedNames = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(
    Effect.orElseSucceed(request.urlParamsBody, () => []),
    (params) => {
      const seen = new Set<string>()
      const repeated = new Set<string>()
      for (const [name] of params) (seen.has(name) ? repeated : seen).add(name)
      return repeated
    },
  )

// A parameter given more than once (RFC 6749 3.2: "MUST NOT be included more than once") reaches the schema
// as the array the form decoding makes of it, which it reports as `grant_type must be a string`; the client
// is told what it did instead. (Answered here, not by the error middleware: no Idempotency-Key to record under.)
const namingRepeats = (request: HttpServerRequest.HttpServerRequest, error: HttpApiDecodeError) =>
  Effect.flatMap(repeatedNames(request), (repeated) =>
    Effect.fail(
      invalidParamsOf(
        new HttpApiDecodeError({
          message: error.message,
          issues: error.issues.map((issue) =>
            issue.path.length === 1 && repeated.has(String(issue.path[0]))
              ? { ...issue, message: "is given more than once" }
              : issue,
          ),
        }),
      ),
    ),
  )

/**
 * A request to the OAuth endpoints with no body at all (the client authenticates with HTTP Basic, the grant
 * type is left out: DESIGN.md section 3) is read as the empty form it is, where @effect/platform would read
 * JSON `null`; a form whose parameters are refused says which were given more than once. (Their
 * `Cache-Control: no-store` is the server middleware's, with the other common headers.)
 */
export const OAuthHttpLive = HttpApiBuilder.middleware(PointsApi, (app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if (!isOAuthPath(pathOf(request))) return app
    if (hasNoBody(request.headers)) {
      return Effect.provideService(
        app,
        HttpServerRequest.HttpServerRequest,
        request.modify({ headers: Headers.set(request.headers, "content-type", FORM) }),
      )
    }
    if (!(request.headers["content-type"] ?? "").toLowerCase().includes(FORM)) return app
    return Effect.catchAllCause(app, (cause) => {
      // Squashed, as the error middleware reads it.
      const error: unknown = Cause.squash(cause)
      return error instanceof HttpApiDecodeError ? namingRepeats(request, error) : Effect.failCause(cause)
    })
  }),
)

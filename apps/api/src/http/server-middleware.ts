import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { API_VERSION, ApiError, answersSigningSecret } from "@points/http-api"
import { uuidV7 } from "@points/infrastructure"
import { Cause, Effect, Exit, FiberRef, HashMap, Option } from "effect"
import { Settings } from "../config.js"
import { entryOf, isAdminPath, isOAuthPath, withOAuthFields } from "./api-error-of.js"
import { credentialsAdmitBody, partnerDecisionBeforeRoute, rateLimited } from "./authentication.js"
import { bodyRouteOf } from "./body-routes.js"
import {
  type BodyBudget,
  bodiesFrom,
  bodyOverBudget,
  bodyWasTooLarge,
  MAX_OAUTH_BODY_BYTES,
  maxBodyBytesOf,
} from "./capped-request.js"
import { errorResponse } from "./error-response.js"
import { recordRequest, requestsInFlight, UNMATCHED_ROUTE } from "./metrics.js"
import { rateLimitHeaders } from "./rate-limit-headers.js"
import { currentRequestId, pathOf, queryIsUtf8 } from "./request-context.js"

const hasBody = (headers: Readonly<Record<string, string | undefined>>) =>
  (headers["content-length"] !== undefined && headers["content-length"] !== "0") ||
  headers["transfer-encoding"] !== undefined

/** A request's id: its `X-Request-Id` when that is 1-200 visible ASCII characters, a fresh UUID otherwise. */
export const requestIdOf = (given: string | undefined) =>
  given !== undefined && /^[\x21-\x7e]{1,200}$/.test(given) ? given : uuidV7()

// The router names the route it matched (its template, e.g. `/api/users/:user_id`) on the request's span,
// which the server's tracer opens around this middleware; a request no route matched has none.
const routeOf = (span: Option.Option<{ readonly attributes: ReadonlyMap<string, unknown> }>) =>
  Option.match(
    Option.flatMap(span, (found) => Option.fromNullable(found.attributes.get("http.route"))),
    { onNone: () => UNMATCHED_ROUTE, onSome: String },
  )

// Probes and scrapes come every few seconds: their access log lines are debug, the rest info.
const quietRoutes = new Set(["/health/live", "/health/ready", "/metrics"])

// The status of a request that wrote no response: 499 (the client went away first, as nginx counts it).
const unwrittenStatus = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? 499 : 500

/**
 * Adds log annotations to the rest of the fiber: a request's fiber is its own (the server forks one per
 * request and runs nothing in it after this middleware), so they are set rather than scoped with
 * `Effect.annotateLogs`, whose `Effect.locally` costs ~26 runtime operations (4 here) and two copies of the
 * fiber's FiberRef map.
 */
export const annotate = (entries: Readonly<Record<string, unknown>>) =>
  FiberRef.update(FiberRef.currentLogAnnotations, (annotations) =>
    Object.entries(entries).reduce((all, [key, value]) => HashMap.set(all, key, value), annotations),
  )

const payloadTooLarge = (path: string) =>
  new ApiError({
    status: 413,
    errors: [entryOf("GH1008", `payload too large: the limit is ${maxBodyBytesOf(path)} bytes`)],
  })

/**
 * Too many bodies arriving at once, in the process (MAX_BUFFERED_BODY_BYTES) or from the request's network or
 * IPv6 site (their shares of that): nothing ran; the client retries shortly.
 */
export const bodiesOverBudget = (budget: BodyBudget) =>
  new ApiError({
    status: 503,
    errors: [
      entryOf(
        "SV5003",
        `service unavailable: too many request bodies are arriving at once${bodiesFrom[budget]}; retry later`,
      ),
    ],
  })

/**
 * The headers every answer to a request for `path` carries: its request id, `Api-Version`, and on the OAuth
 * endpoints and those answering a webhook signing secret `Cache-Control: no-store` and `Pragma: no-cache`.
 */
export const commonHeaders = (path: string, requestId: string): Readonly<Record<string, string>> => ({
  "X-Request-Id": requestId,
  "Api-Version": API_VERSION,
  // Every answer of the OAuth endpoints, errors included, is not to be stored (RFC 6749 5.1), nor one that
  // shows a secret once.
  ...(isOAuthPath(path) || answersSigningSecret(path)
    ? { "Cache-Control": "no-store", Pragma: "no-cache" }
    : {}),
})

/** Why a request is answered before routing, and the headers that answer adds. */
interface Refusal {
  readonly error: ApiError
  readonly headers?: Readonly<Record<string, string>>
}

// The content codings a request's body is said to be in (RFC 9110 8.4), `identity` (none) left out.
const contentCodingsOf = (header: string | undefined) =>
  (header ?? "")
    .split(",")
    .map((coding) => coding.trim())
    .filter((coding) => coding !== "" && coding.toLowerCase() !== "identity")

// A coding is a token (RFC 9110 5.6.2); anything else in the header is not echoed back.
const isCodingName = (coding: string) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/.test(coding)

const unsupportedCoding = (codings: ReadonlyArray<string>) =>
  new ApiError({
    status: 415,
    errors: [
      entryOf(
        "GH1010",
        codings.every(isCodingName)
          ? `Content-Encoding ${codings.join(", ")} is not supported: send the body uncompressed`
          : "this Content-Encoding is not supported: send the body uncompressed",
      ),
    ],
  })

const routeNotFound = () => new ApiError({ status: 404, errors: [entryOf("NN1002", "route not found")] })

const invalidRequest = (message: string) =>
  new ApiError({ status: 400, errors: [entryOf("GH1006", `invalid params: ${message}`)] })

/**
 * The refusal of a request the router or a handler would get wrong, if it is one (checked before anything reads
 * its body). A body sent without Content-Length (chunked) is capped while it is read instead (CappedRequest).
 */
const refusalBeforeRouting = (
  request: HttpServerRequest.HttpServerRequest,
  path: string,
  bodyRoute: ReturnType<typeof bodyRouteOf>,
  adminApiOn: boolean,
): Refusal | undefined => {
  // With no ADMIN_TOKEN the admin API does not exist (DESIGN.md section 8): first, so that no other refusal
  // (415 for a route that takes JSON, 413, 400) tells which of its routes there are.
  if (!adminApiOn && isAdminPath(path)) return { error: routeNotFound() }
  // The router reads `;` and `#` as the end of the path (`/api/users/<id>;x` would be that user's route),
  // and an empty segment as an empty parameter (`/api/users/` was Get user ""): no path of the contract
  // has either, so such a path names no route.
  if (/[;#]|\/\/|.\/$/.test(path)) {
    return { error: routeNotFound() }
  }
  // HTTP/1.1 requires Host (RFC 9112 3.2); Node's own check (turned off) answered it without a body.
  // Not valid HTTP/1.1, so the connection is closed, as for the requests Node refuses itself.
  if (
    request.headers.host === undefined &&
    NodeHttpServerRequest.toIncomingMessage(request).httpVersion === "1.1"
  ) {
    return { error: invalidRequest("the Host header is required"), headers: { Connection: "close" } }
  }
  if (!queryIsUtf8(request)) return { error: invalidRequest("the query string is not percent-encoded UTF-8") }
  // Node keeps the first of several Authorization fields and drops the others; a proxy in front may keep the
  // last. Credentials that two readers could read two ways are refused (RFC 9110 allows one such field).
  if ((NodeHttpServerRequest.toIncomingMessage(request).headersDistinct.authorization?.length ?? 0) > 1) {
    return { error: invalidRequest("the Authorization header is sent more than once") }
  }
  const declaredLength = Number(request.headers["content-length"] ?? "0")
  // The path's limit worked out only for a length past the smallest one: most requests carry little or none.
  if (
    Number.isFinite(declaredLength) &&
    declaredLength > MAX_OAUTH_BODY_BYTES &&
    declaredLength > maxBodyBytesOf(path)
  ) {
    return { error: payloadTooLarge(path) }
  }
  const accepted = bodyRoute?.mediaTypes
  const contentType = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? ""
  if (accepted !== undefined && hasBody(request.headers) && !accepted.includes(contentType)) {
    const error = new ApiError({
      status: 415,
      errors: [entryOf("GH1010", `unsupported media type: send ${accepted.join(" or ")}`)],
    })
    return { error }
  }
  // A compressed body is not decompressed: read as it is, it was refused as not UTF-8 (400), when it is the
  // coding the server does not take (RFC 9110 15.5.16).
  const codings = contentCodingsOf(request.headers["content-encoding"])
  if (accepted !== undefined && hasBody(request.headers) && codings.length > 0) {
    return { error: unsupportedCoding(codings) }
  }
  return undefined
}

/**
 * Wraps every request, routed or not: gives it a request id (echoed as `X-Request-Id`) and `Api-Version`
 * (and `Cache-Control: no-store` on the OAuth endpoints), answers everything under /admin/api 404 NN1002 when
 * the admin API is off,
 * refuses bodies over their limit (413 GH1008: 1 MiB, 16 KiB on the OAuth endpoints) and bodies of a media type
 * or in a content coding the route does not take (415 GH1010) before anything reads them, and caps what may be
 * read at the same size. Counts and times every request by
 * route template and status (`/metrics`) and writes its access log line.
 */
export const serverMiddleware = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const startedAt = performance.now()
    const span = yield* Effect.option(Effect.currentSpan)
    // The status actually written, seen by the pre-response handler (error answers made further in too).
    let written: number | undefined
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = requestIdOf(request.headers["x-request-id"])
    const settings = yield* Settings
    const path = pathOf(request)
    const bodyRoute = bodyRouteOf(request.method, path)
    const common = commonHeaders(path, requestId)
    yield* FiberRef.set(currentRequestId, requestId)
    yield* annotate({ service: "api", request_id: requestId, method: request.method, path })

    // The server writes the response inside this middleware; headers are added on the way out by a
    // pre-response handler, which also sees the error responses made further in.
    yield* HttpApp.appendPreResponseHandler((_request, response) => {
      written = response.status
      return Effect.succeed(
        HttpServerResponse.setHeaders(response, {
          ...common,
          // An indeterminate 503 (database out of reach, contention) tells the client when to retry.
          ...(response.status === 503 && response.headers["retry-after"] === undefined
            ? { "Retry-After": "2" }
            : {}),
        }),
      )
    })
    // Answers made here, before routing, never pass the pre-response handlers: they get the headers directly,
    // and their metrics the template of the route they were refused at (no router named it).
    let refusedAt: string | undefined
    const refused = (error: ApiError, headers: Readonly<Record<string, string>> = {}) => {
      // A path refused as naming no route is counted as no route, whichever template it resembles.
      refusedAt = error.errors[0].code === "NN1002" ? UNMATCHED_ROUTE : bodyRoute?.template
      return Effect.map(errorResponse(withOAuthFields(path, error)), (response) =>
        HttpServerResponse.setHeaders(response, { ...common, ...headers }),
      )
    }
    const refusal = refusalBeforeRouting(request, path, bodyRoute, Option.isSome(settings.adminToken))
    // The body is read in full first, while the request can still be interrupted: a write's route runs
    // uninterruptibly (writeOptions), and one that starts reading a body whose client has gone meanwhile
    // waits for ever (Node destroyed the stream without an error to report, having no listener for it then).
    // The platform interrupts a request whose connection closed; here that ends it. The text is cached for
    // the route; a read that failed as not UTF-8 fails the route's own read the same way.
    // A chunked body that went over the limit while read is refused here, on every route: the route never
    // runs (a write that takes no body would otherwise commit and be answered 413) and no key is used.
    // Only the body of a request whose credentials are good (credentialsAdmitBody): any other is left to its
    // route, whose authentication refuses it unread (or to Node, which drops it), so that no client without
    // credentials can make the server hold a body it sends slowly. Checking a token may wait on the database;
    // a client that went away meanwhile left a request that no read would ever end: it ends here.
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    const bodyRead = hasBody(request.headers)
      ? Effect.flatMap(credentialsAdmitBody(path), (admitted) => {
          // Refused over a cap while its token was checked: answered below, from the flags, with no read.
          if (bodyWasTooLarge(incoming) || bodyOverBudget(incoming) !== undefined) return Effect.void
          if (incoming.destroyed && !incoming.complete) return Effect.interrupt
          return admitted ? Effect.ignore(request.text) : Effect.void
        })
      : Effect.void
    const routed = Effect.if(
      Effect.sync(() => bodyWasTooLarge(incoming)),
      {
        // The token was good (the body was read): the partner's limit is taken, and said, as on its route.
        onTrue: () =>
          Effect.flatMap(partnerDecisionBeforeRoute(path), (decision) =>
            decision === undefined
              ? refused(payloadTooLarge(path))
              : refused(
                  decision.allowed ? payloadTooLarge(path) : rateLimited(decision),
                  rateLimitHeaders([["partner", decision]]),
                ),
          ),
        onFalse: () =>
          Effect.suspend(() => {
            const budget = bodyOverBudget(incoming)
            if (budget !== undefined) return refused(bodiesOverBudget(budget), { "Retry-After": "2" })
            return app
          }),
      },
    )
    const handled =
      refusal === undefined ? Effect.zipRight(bodyRead, routed) : refused(refusal.error, refusal.headers)

    // Measured once the response is written (the server writes it inside this middleware), by route
    // template, never by concrete path; one access log line per request, with no header or body in it.
    const observe = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) => {
      const seconds = (performance.now() - startedAt) / 1000
      const route = refusedAt ?? routeOf(span)
      const status = written ?? (Exit.isSuccess(exit) ? exit.value.status : unwrittenStatus(exit))
      recordRequest({ method: request.method, route, status, seconds })
      requestsInFlight.unsafeModify(-1, [])
      const log = quietRoutes.has(route) ? Effect.logDebug : Effect.logInfo
      return Effect.zipRight(
        annotate({ route, status, duration_ms: Math.round(seconds * 10_000) / 10 }),
        log("request"),
      )
    }
    requestsInFlight.unsafeModify(1, [])
    return yield* Effect.onExit(handled, observe)
  }),
)

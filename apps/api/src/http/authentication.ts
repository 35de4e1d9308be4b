import { createHash, timingSafeEqual } from "node:crypto"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { InvalidToken } from "@points/domain"
import { AdminAuthentication, ApiError, Authentication, routedPath } from "@points/http-api"
import {
  BearerTokens,
  consumeRateLimit,
  FailedAuthentications,
  makeCoalescedRateLimit,
  type Principal,
  type RateLimitDecision,
} from "@points/infrastructure"
import { Data, Effect, Exit, FiberRef, Layer, Metric, Option, Redacted } from "effect"
import { partnerRateLimitPolicy, Settings } from "../config.js"
import { apiErrorOf, entryOf, isAdminPath, isOAuthPath } from "./api-error-of.js"
import { type BearerCredentials, bearerChallenge, bearerCredentialsOf } from "./bearer-credentials.js"
import { takeHandedOverDecision } from "./handed-over.js"
import { rateLimitRejections } from "./metrics.js"
import { rateLimitHeaders } from "./rate-limit-headers.js"
import { currentPartnerId } from "./request-context.js"

const challenge = (credentials: BearerCredentials, error: ApiError) =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(
        HttpServerResponse.setHeader(response, "WWW-Authenticate", bearerChallenge(credentials)),
      ),
    ),
    Effect.fail(error),
  )

// The request's own Authorization header, read strictly: the token the platform hands the middleware is the
// header minus its first seven characters, whatever the scheme was.
const requestCredentials = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
  bearerCredentialsOf(request.headers.authorization),
)

const missingOrMalformed = (credentials: BearerCredentials) =>
  challenge(
    credentials,
    apiErrorOf(new InvalidToken({ reason: credentials._tag === "Absent" ? "missing" : "malformed" })),
  )

/**
 * The bearer tokens this process has checked, remembered for TOKEN_CACHE_SECONDS unless a revocation is
 * heard first (any process's, through LISTEN/NOTIFY: see BearerTokens).
 */
export const BearerTokensLive = Layer.unwrapEffect(
  Effect.map(Settings, (settings) =>
    BearerTokens.layer({ ttlSeconds: settings.tokenCacheSeconds, capacity: 10_000 }),
  ),
)

/**
 * Each source network's failed authentications, in this process: past AUTH_FAILURE_LIMIT_PER_ADDRESS a second
 * (over 10-second windows; twice that for the networks of an IPv6 /48 together, in windows they share) its
 * bearer tokens are not looked up, nor its admin tokens compared, until the window ends (see
 * FailedAuthentications).
 */
export const FailedAuthenticationsLive = Layer.unwrapEffect(
  Effect.map(Settings, (settings) => FailedAuthentications.layer(settings.authFailureLimitPerAddress)),
)

// A request from a network whose failed authentications reached their limit: its credentials go unchecked.
class AuthenticationsRefused extends Data.TaggedError("AuthenticationsRefused")<{
  readonly retryAfterSeconds: number
}> {}

// The 429 GH1009 of AuthenticationsRefused, with Retry-After; not a partner's: no RateLimit headers.
const refusedAuthentications = (refusal: AuthenticationsRefused) =>
  Effect.zipRight(
    Effect.zipRight(
      Metric.increment(rateLimitRejections),
      HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.succeed(
          HttpServerResponse.setHeader(response, "Retry-After", String(refusal.retryAfterSeconds)),
        ),
      ),
    ),
    Effect.fail(
      new ApiError({
        status: 429,
        errors: [
          entryOf(
            "GH1009",
            `too many failed authentications from your network: retry after ${refusal.retryAfterSeconds} s`,
          ),
        ],
      }),
    ),
  )

/** The address a request came from, as the limits per source network count it ("unknown" when not known). */
export const remoteAddressOf = (request: HttpServerRequest.HttpServerRequest) =>
  Option.getOrElse(request.remoteAddress, () => "unknown")

// What a request's bearer token came to, once refused: the server middleware (deciding whether to read the
// body) and the route's authentication ask for the same request, which looks the token up and counts a
// failure once.
const bearerRefusals = new WeakMap<object, Exit.Exit<never, InvalidToken | AuthenticationsRefused>>()

// The principal of the request's bearer token: one this process holds as valid, or else looked up, unless the
// request's network has failed too often lately. A lookup is counted as a failure before it starts, in the
// same step as the check (FailedAuthentications.charge), and given back once the token proves valid (or the
// database could not tell): a client that closes its connection while its token is looked up leaves the
// failure counted (its request interrupted, nothing after the lookup runs), and requests arriving together
// cannot all pass the check before any failure is counted.
const checkedBearer = (token: string) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    const refused = bearerRefusals.get(incoming)
    if (refused !== undefined) return yield* refused
    const tokens = yield* BearerTokens
    const holding = yield* tokens.held(token)
    if (holding._tag === "Held") return holding.principal
    const failures = yield* FailedAuthentications
    const address = remoteAddressOf(request)
    const charge = yield* failures.charge(address)
    if (charge._tag === "Refused") {
      const refusal = Exit.fail(new AuthenticationsRefused({ retryAfterSeconds: charge.retryAfterSeconds }))
      bearerRefusals.set(incoming, refusal)
      return yield* refusal
    }
    return yield* holding.lookUp.pipe(
      Effect.tap(() => charge.forgive),
      Effect.tapError((error) => {
        if (!(error instanceof InvalidToken)) return charge.forgive
        bearerRefusals.set(incoming, Exit.fail(error))
        return Effect.void
      }),
    )
  }) satisfies Effect.Effect<Principal, unknown, unknown>

/** The 429 GH1009 of a request its partner's rate limit refused. */
export const rateLimited = (decision: RateLimitDecision) =>
  new ApiError({
    status: 429,
    errors: [entryOf("GH1009", `rate limit reached: retry after ${decision.retryAfterSeconds} s`)],
  })

// The partner whose valid bearer token a request to a partner route (`/api`, not the token endpoints) carries,
// if any: what lets the server read its body first, and whose limit a refusal before the route takes.
const bearerPartnerOf = (path: string) =>
  Effect.gen(function* () {
    if (isOAuthPath(path) || isAdminPath(path) || !routedPath(path).startsWith("/api/")) {
      return Option.none()
    }
    const credentials = yield* requestCredentials
    if (credentials._tag !== "Token") return Option.none()
    return yield* Effect.option(checkedBearer(credentials.token))
  })

/**
 * The partner's rate-limit decision for a request refused before its route (a chunked body found too large
 * as it was read): taken as the route's authentication would have taken it, so that an authenticated
 * request's answer carries the RateLimit headers and counts against the limit whichever step refuses it
 * (DESIGN.md section 7). None for a request that is not a partner's with a valid token, or when the
 * database cannot tell (the refusal is answered without it).
 */
export const partnerDecisionBeforeRoute = (path: string) =>
  Effect.gen(function* () {
    const principal = yield* bearerPartnerOf(path)
    if (Option.isNone(principal)) return undefined
    const policy = partnerRateLimitPolicy(yield* Settings)
    const decision = yield* Effect.option(consumeRateLimit(`partner:${principal.value.partnerId}`, policy))
    if (Option.isSome(decision) && !decision.value.allowed) yield* Metric.increment(rateLimitRejections)
    return Option.getOrUndefined(decision)
  })

/**
 * Bearer authentication (RFC 6750) and the partner's rate limit (DESIGN.md section 7), before any handler
 * runs: a bad token or a throttled request executes nothing and leaves its Idempotency-Key unused. Every
 * authenticated response carries the `RateLimit` and `RateLimit-Policy` headers; a 429 also `Retry-After`.
 */
export const AuthenticationLive = Layer.scoped(
  Authentication,
  Effect.gen(function* () {
    const settings = yield* Settings
    const tokens = yield* BearerTokens
    const failures = yield* FailedAuthentications
    // A partner's concurrent requests take their rate-limit cells in one statement (decided as one by one).
    const rateLimit = yield* makeCoalescedRateLimit
    const policy = partnerRateLimitPolicy(settings)
    return {
      bearer: () =>
        Effect.gen(function* () {
          const credentials = yield* requestCredentials
          if (credentials._tag !== "Token") return yield* missingOrMalformed(credentials)
          const principal = yield* checkedBearer(credentials.token).pipe(
            Effect.provideService(BearerTokens, tokens),
            Effect.provideService(FailedAuthentications, failures),
            Effect.catchAll((error) =>
              error instanceof InvalidToken
                ? challenge(credentials, apiErrorOf(error))
                : error instanceof AuthenticationsRefused
                  ? refusedAuthentications(error)
                  : error instanceof ApiError
                    ? Effect.fail(error)
                    : Effect.die(error),
            ),
          )
          const request = yield* HttpServerRequest.HttpServerRequest
          const decision =
            takeHandedOverDecision(NodeHttpServerRequest.toIncomingMessage(request)) ??
            (yield* rateLimit.consume(`partner:${principal.partnerId}`, policy).pipe(Effect.orDie))
          yield* HttpApp.appendPreResponseHandler((_request, response) =>
            Effect.succeed(
              HttpServerResponse.setHeaders(response, rateLimitHeaders([["partner", decision]])),
            ),
          )
          if (!decision.allowed) {
            yield* Metric.increment(rateLimitRejections)
            return yield* Effect.fail(rateLimited(decision))
          }
          // Set on the request's own fiber (as its request id is): cheaper than a scoped provide.
          yield* FiberRef.set(currentPartnerId, Option.some(principal.partnerId))
          return principal
        }),
    }
  }),
)

// Compared as SHA-256 digests, of one length whatever was sent: the time taken tells neither the admin
// token's length nor how much of it a guess got right.
const digestOf = (text: string) => createHash("sha256").update(text, "utf8").digest()
const sameSecret = (given: string, expected: string) => timingSafeEqual(digestOf(given), digestOf(expected))

/** Bearer `ADMIN_TOKEN` for the admin API; with no ADMIN_TOKEN the admin API does not exist (404 NN1002). */
export const AdminAuthenticationLive = Layer.effect(
  AdminAuthentication,
  Effect.gen(function* () {
    const settings = yield* Settings
    const failures = yield* FailedAuthentications
    return {
      adminToken: () =>
        Option.match(settings.adminToken, {
          onNone: () =>
            Effect.fail(new ApiError({ status: 404, errors: [entryOf("NN1002", "route not found")] })),
          // A network that has sent wrong admin tokens too often lately gets none compared, the right one
          // included, until its window ends: a guess is never answered (credentialsAdmitBody does not
          // compare either). A request without a token is refused as before and counts for nothing.
          onSome: (expected) =>
            Effect.gen(function* () {
              const credentials = yield* requestCredentials
              const refused = challenge(
                credentials,
                new ApiError({ status: 401, errors: [entryOf("GH1003", "invalid token")] }),
              )
              if (credentials._tag !== "Token") return yield* refused
              // Counted before the comparison and given back if it holds, as a bearer lookup is.
              const address = remoteAddressOf(yield* HttpServerRequest.HttpServerRequest)
              const charge = yield* failures.charge(address)
              if (charge._tag === "Refused") {
                const { retryAfterSeconds } = charge
                return yield* refusedAuthentications(new AuthenticationsRefused({ retryAfterSeconds }))
              }
              if (sameSecret(credentials.token, Redacted.value(expected))) return yield* charge.forgive
              return yield* refused
            }),
        }),
    }
  }),
)

/**
 * Whether a request's credentials let the server read its body before routing (see serverMiddleware): the
 * token endpoints' always (the body holds the client's credentials), the admin API's with the admin token,
 * every other `/api` route's with a valid bearer token, anything else never (no route outside them takes a
 * body). A body that is not read first is read by its route after its authentication, or not at all: a
 * client without credentials cannot make the server hold its body, slowly sent, in memory.
 */
export const credentialsAdmitBody = (path: string) =>
  Effect.gen(function* () {
    if (isOAuthPath(path)) return true
    if (isAdminPath(path)) {
      const credentials = yield* requestCredentials
      const settings = yield* Settings
      // Not compared for a network refused for its failures: whether its body is read would answer a guess.
      const address = remoteAddressOf(yield* HttpServerRequest.HttpServerRequest)
      if ((yield* (yield* FailedAuthentications).refusedFor(address)) > 0) return false
      return (
        credentials._tag === "Token" &&
        Option.exists(settings.adminToken, (expected) =>
          sameSecret(credentials.token, Redacted.value(expected)),
        )
      )
    }
    return Option.isSome(yield* bearerPartnerOf(path))
  })

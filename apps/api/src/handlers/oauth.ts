import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { InvalidClientCredentials, InvalidParams, idAsIssued } from "@points/domain"
import { ApiError, PointsApi } from "@points/http-api"
import {
  addressRateLimitPolicy,
  BearerTokens,
  consumeClientRateLimit,
  consumeSourceRateLimits,
  issueToken,
  type RateLimitDecision,
  revokeToken,
} from "@points/infrastructure"
import { Effect, Metric } from "effect"
import { Settings } from "../config.js"
import { answer } from "../http/answer.js"
import { entryOf } from "../http/api-error-of.js"
import { remoteAddressOf } from "../http/authentication.js"
import { basicCredentialsOf } from "../http/basic-credentials.js"
import { rateLimitRejections } from "../http/metrics.js"
import { rateLimitHeaders } from "../http/rate-limit-headers.js"
import { writeOptions } from "../http/write-options.js"

// RFC 6749 5.2: a client that tried to authenticate with the Authorization header is answered 401 with a
// challenge of that scheme, whatever was wrong (the header itself, the id or the secret).
const basicChallenge = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(
    response.status === 401
      ? HttpServerResponse.setHeader(response, "WWW-Authenticate", 'Basic realm="points"')
      : response,
  ),
)

/**
 * Finds the client's credentials in the Authorization header (Basic) or the body, but never both: beside
 * Basic, the body may name the client (`client_id`, RFC 6749 3.2.1) but not hold a secret, which would be a
 * second way of authenticating it (2.3).
 */
const clientOf = (body: {
  readonly client_id?: string | undefined
  readonly client_secret?: string | undefined
}) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const basic = basicCredentialsOf(request.headers.authorization)
    if (basic._tag !== "Absent") {
      yield* basicChallenge
      if (basic._tag === "Malformed") return yield* new InvalidClientCredentials()
      if (body.client_secret !== undefined) {
        return yield* new InvalidParams({ field: "", problem: "use one way to authenticate the client" })
      }
      // Compared as ids are (an id's letter case does not matter); any other text exactly as sent.
      if (body.client_id !== undefined && idAsIssued(body.client_id) !== idAsIssued(basic.clientId)) {
        return yield* new InvalidParams({
          field: "client_id",
          problem: "does not match the Authorization header",
        })
      }
      return { client_id: basic.clientId, client_secret: basic.clientSecret }
    }
    if (body.client_id === undefined || body.client_secret === undefined) {
      return yield* new InvalidClientCredentials()
    }
    return { client_id: body.client_id, client_secret: body.client_secret }
  })

// A guessing client is throttled before its secret is checked (DESIGN.md section 7): per source network
// first (a caller inventing client ids would otherwise make the API run an Argon2id check per request), and
// from IPv6 per site (a /48's networks together), then per client id from that source (another source's
// guesses leave the client's own callers their allowance). Every answer after this point says
// where the buckets stand, a refusal also when to retry; a refused request takes nothing from the client's
// bucket.
const throttle = (clientId: string) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const request = yield* HttpServerRequest.HttpServerRequest
    const decisions: Array<readonly [string, RateLimitDecision]> = []
    const address = remoteAddressOf(request)
    if (settings.tokenRateLimitPerAddress > 0) {
      const policy = addressRateLimitPolicy(settings.tokenRateLimitPerAddress)
      decisions.push(...(yield* Effect.orDie(consumeSourceRateLimits(address, policy))))
    }
    if (decisions.every(([, decision]) => decision.allowed)) {
      decisions.push(["client", yield* Effect.orDie(consumeClientRateLimit(clientId, address))])
    }
    yield* HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, rateLimitHeaders(decisions))),
    )
    const refused = decisions.find(([, decision]) => !decision.allowed)
    if (refused === undefined) return
    yield* Metric.increment(rateLimitRejections)
    return yield* Effect.fail(
      new ApiError({
        status: 429,
        errors: [entryOf("GH1009", `rate limit reached: retry after ${refused[1].retryAfterSeconds} s`)],
      }),
    )
  })

/**
 * OAuth 2.0 client credentials (RFC 6749 4.4, 5.1, 5.2) and token revocation (RFC 7009). A refusal's RFC 6749
 * `error` is added with the other OAuth fields (withOAuthFields); a request without a body and no-store on
 * every answer are OAuthHttpLive's.
 */
export const OAuthLive = HttpApiBuilder.group(PointsApi, "oauth", (handlers) =>
  handlers
    .handle(
      "createToken",
      ({ payload }) =>
        Effect.gen(function* () {
          const settings = yield* Settings
          if (payload.grant_type !== undefined && payload.grant_type !== "client_credentials") {
            return yield* Effect.fail(
              new ApiError({
                status: 400,
                errors: [entryOf("GH1007", "unsupported grant type: only client_credentials is supported")],
              }),
            )
          }
          // RFC 6749 3.3 would have the answer name the scope granted, which the published token object has
          // no field for; a token grants the partner's whole API, so a request for a scope is refused.
          if (payload.scope !== undefined) {
            const message = new InvalidParams({
              field: "scope",
              problem: "is not supported: this platform issues tokens without scopes; omit it",
            }).message
            return yield* Effect.fail(
              new ApiError({
                status: 400,
                errors: [entryOf("GH1006", message)],
                error: "invalid_scope",
                error_description: message,
              }),
            )
          }
          const client = yield* clientOf(payload)
          yield* throttle(client.client_id)
          return yield* issueToken(client, { ttlSeconds: settings.tokenTtlSeconds })
        }).pipe(answer),
      writeOptions,
    )
    .handle(
      "revokeToken",
      ({ payload }) =>
        Effect.gen(function* () {
          const client = yield* clientOf(payload)
          yield* throttle(client.client_id)
          const revoked = yield* revokeToken({ ...client, token: payload.token })
          // This process stops accepting it at once; the others when they hear the revocation (or within their
          // cache's lifetime). A token that was not revoked now (unknown, or revoked before) is not forgotten:
          // a revocation request for a made-up token must not touch the process's trust in others.
          if (revoked) yield* (yield* BearerTokens).forget(payload.token)
        }).pipe(answer),
      writeOptions,
    ),
)

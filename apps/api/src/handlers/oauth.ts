import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { InvalidClientCredentials } from "@points/domain"
import { ApiError, PointsApi } from "@points/http-api"
import { BearerTokens, consumeRateLimit, issueToken, revokeToken } from "@points/infrastructure"
import { Effect, Option } from "effect"
import { Settings } from "../config.js"
import { answer } from "../http/answer.js"
import { entryOf } from "../http/api-error-of.js"
import { writeOptions } from "../http/write-options.js"

interface ClientCredentials {
  readonly client_id: string
  readonly client_secret: string
  readonly viaBasic: boolean
}

// RFC 6749 2.3.1: Basic credentials are form-urlencoded before base64, so `%3A` in an id is a colon.
const fromBasic = (header: string | undefined): Option.Option<ClientCredentials> => {
  const encoded = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? "")?.[1]
  if (encoded === undefined) return Option.none()
  const decoded = Buffer.from(encoded, "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  if (colon < 0) return Option.none()
  try {
    const unform = (part: string) => decodeURIComponent(part.replaceAll("+", " "))
    return Option.some({
      client_id: unform(decoded.slice(0, colon)),
      client_secret: unform(decoded.slice(colon + 1)),
      viaBasic: true,
    })
  } catch {
    return Option.none()
  }
}

const oauthError = (
  status: 400 | 401 | 429,
  code: "GH1001" | "GH1006" | "GH1007" | "GH1009",
  error: string,
  message: string,
) => new ApiError({ status, errors: [entryOf(code, message)], error, error_description: message })

const invalidClient = () =>
  Effect.fail(oauthError(401, "GH1001", "invalid_client", new InvalidClientCredentials().message))

/** Finds the client's credentials in the Authorization header (Basic) or the body, but never both. */
const clientOf = (body: {
  readonly client_id?: string | undefined
  readonly client_secret?: string | undefined
}) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const basic = fromBasic(request.headers.authorization)
    const inBody = body.client_id !== undefined || body.client_secret !== undefined
    if (Option.isSome(basic)) {
      if (inBody) {
        return yield* Effect.fail(
          oauthError(
            400,
            "GH1006",
            "invalid_request",
            "invalid params: use one way to authenticate the client",
          ),
        )
      }
      return basic.value
    }
    if (body.client_id === undefined || body.client_secret === undefined) return yield* invalidClient()
    return { client_id: body.client_id, client_secret: body.client_secret, viaBasic: false }
  })

// A guessing client is throttled per client id, before its secret is checked (DESIGN.md section 7).
const throttle = (clientId: string) =>
  Effect.flatMap(
    consumeRateLimit(`client:${clientId}`, { ratePerSecond: 5, burst: 20 }).pipe(Effect.orDie),
    (decision) =>
      decision.allowed
        ? Effect.void
        : Effect.fail(
            oauthError(
              429,
              "GH1009",
              "slow_down",
              `rate limit reached: retry after ${decision.retryAfterSeconds} s`,
            ),
          ),
  )

const withBasicChallenge = (viaBasic: boolean) => (error: ApiError) =>
  viaBasic && error.status === 401
    ? Effect.succeed(
        HttpServerResponse.text(
          JSON.stringify({
            errors: error.errors,
            error: error.error,
            error_description: error.error_description,
          }),
          {
            status: 401,
            contentType: "application/json",
            headers: { "WWW-Authenticate": 'Basic realm="points"' },
          },
        ),
      )
    : Effect.fail(error)

const noStore = { "Cache-Control": "no-store", Pragma: "no-cache" }

/** OAuth 2.0 client credentials (RFC 6749 4.4, 5.1, 5.2) and token revocation (RFC 7009). */
export const OAuthLive = HttpApiBuilder.group(PointsApi, "oauth", (handlers) =>
  handlers
    .handle(
      "createToken",
      ({ payload }) =>
        Effect.gen(function* () {
          const settings = yield* Settings
          if (payload.grant_type !== undefined && payload.grant_type !== "client_credentials") {
            return yield* Effect.fail(
              oauthError(
                400,
                "GH1007",
                "unsupported_grant_type",
                "unsupported grant type: only client_credentials is supported",
              ),
            )
          }
          const client = yield* clientOf(payload)
          yield* throttle(client.client_id)
          const token = yield* issueToken(client, { ttlSeconds: settings.tokenTtlSeconds }).pipe(
            Effect.catchIf(
              (error): error is InvalidClientCredentials => error instanceof InvalidClientCredentials,
              () =>
                Effect.fail(
                  oauthError(401, "GH1001", "invalid_client", new InvalidClientCredentials().message),
                ),
            ),
            answer,
            Effect.catchAll(withBasicChallenge(client.viaBasic)),
          )
          if (HttpServerResponse.isServerResponse(token)) return token
          return HttpServerResponse.unsafeJson(token, { status: 200, headers: noStore })
        }),
      writeOptions,
    )
    .handle(
      "revokeToken",
      ({ payload }) =>
        Effect.gen(function* () {
          const client = yield* clientOf(payload)
          yield* throttle(client.client_id)
          const revoked = yield* revokeToken({ ...client, token: payload.token }).pipe(
            Effect.catchIf(
              (error): error is InvalidClientCredentials => error instanceof InvalidClientCredentials,
              () =>
                Effect.fail(
                  oauthError(401, "GH1001", "invalid_client", new InvalidClientCredentials().message),
                ),
            ),
            answer,
            Effect.catchAll(withBasicChallenge(client.viaBasic)),
          )
          if (HttpServerResponse.isServerResponse(revoked)) return revoked
          // This process stops accepting it at once; the others within their cache's lifetime.
          yield* (yield* BearerTokens).forget(payload.token)
          return HttpServerResponse.empty({ status: 200, headers: noStore })
        }),
      writeOptions,
    ),
)

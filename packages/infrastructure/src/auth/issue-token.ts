import type { SqlClient, SqlError } from "@effect/sql"
import { InvalidClientCredentials } from "@points/domain"
import { Effect } from "effect"
import { uuidV7 } from "../ids/uuid-v7.js"
import { accessTokenHash, newAccessToken } from "./access-token.js"
import { authenticateClient } from "./authenticate-client.js"
import { insertAccessToken } from "./insert-access-token.js"

/** The access token object of Create Token (published 2.1, plus RFC 6749's `expires_in`). */
export interface TokenResource {
  readonly token_id: string
  /** The token value; the same as `access_token`. */
  readonly token: string
  readonly access_token: string
  readonly token_type: "Bearer"
  /** Unix seconds from which the token is refused. */
  readonly expires_at: number
  /** The token's lifetime in seconds. */
  readonly expires_in: number
}

/** The longest lifetime a token may be given (a year): beyond it a TOKEN_TTL_SECONDS is a mistake. */
export const MAX_TOKEN_TTL_SECONDS = 31_536_000

/**
 * Create Token (OAuth 2.0 client credentials): checks the client's secret and stores a fresh opaque token,
 * only as its SHA-256, valid for `ttlSeconds` on the database clock. GH1001 for an unknown, revoked or wrong
 * client; the token is shown here only.
 */
export const issueToken = (
  input: { readonly client_id: string; readonly client_secret: string },
  options: { readonly ttlSeconds: number },
): Effect.Effect<TokenResource, InvalidClientCredentials | SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const ttlSeconds = options.ttlSeconds
    if (!(Number.isInteger(ttlSeconds) && ttlSeconds >= 1 && ttlSeconds <= MAX_TOKEN_TTL_SECONDS)) {
      return yield* Effect.dieMessage(`ttlSeconds must be an integer from 1 to ${MAX_TOKEN_TTL_SECONDS}`)
    }
    const client = yield* authenticateClient(input.client_id, input.client_secret)
    const token = newAccessToken()
    const inserted = yield* insertAccessToken({
      tokenHash: accessTokenHash(token),
      tokenId: uuidV7(),
      client,
      ttlSeconds,
    })
    // The credential was revoked, or its secret rotated out, after the secret was checked.
    if (inserted === null) return yield* new InvalidClientCredentials()
    return {
      token_id: inserted.tokenId,
      token,
      access_token: token,
      token_type: "Bearer",
      expires_at: inserted.expiresAt,
      expires_in: ttlSeconds,
    } satisfies TokenResource
  }).pipe(Effect.withSpan("auth.issueToken"))

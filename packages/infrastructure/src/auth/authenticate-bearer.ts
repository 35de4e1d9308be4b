import { SqlClient, type SqlError } from "@effect/sql"
import { InvalidToken, PartnerId } from "@points/domain"
import { Effect } from "effect"
import { accessTokenHash, isAccessTokenShaped } from "./access-token.js"

/** Who a request acts for, proved by its bearer token. */
export interface Principal {
  readonly partnerId: PartnerId
  readonly clientId: string
  readonly tokenId: string
}

interface TokenLookupRow {
  readonly token_id: string
  readonly client_id: string
  readonly partner_id: string
  readonly revoked: boolean
  readonly expired: boolean
  readonly expires_in_ms: number
}

/** A valid token's principal, and how long (on the database clock) until the token expires. */
export interface BearerLookup {
  readonly principal: Principal
  readonly expiresInMs: number
}

/**
 * Looks a token up by its SHA-256: one read by primary key, expiry judged on the database clock, the clock
 * that set it. GH1003 `unknown`, `revoked` or `expired`.
 */
export const lookupBearer = (
  tokenHash: string,
): Effect.Effect<BearerLookup, InvalidToken | SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<TokenLookupRow>`
      SELECT token_id::text AS token_id, client_id::text AS client_id, partner_id::text AS partner_id,
             revoked_at IS NOT NULL AS revoked, expires_at <= now() AS expired,
             floor(extract(epoch FROM expires_at - now()) * 1000)::float8 AS expires_in_ms
      FROM access_tokens WHERE token_hash = ${tokenHash}`
    const row = rows[0]
    if (row === undefined) return yield* new InvalidToken({ reason: "unknown" })
    if (row.revoked) return yield* new InvalidToken({ reason: "revoked" })
    if (row.expired) return yield* new InvalidToken({ reason: "expired" })
    return {
      principal: {
        partnerId: PartnerId.make(row.partner_id),
        clientId: row.client_id,
        tokenId: row.token_id,
      },
      expiresInMs: row.expires_in_ms,
    }
  })

/**
 * Checks a bearer token, on every request: one lookup by primary key (the token's SHA-256), expiry judged on
 * the database clock, the clock that set it. GH1003 with the reason: `malformed` (not a token we issue,
 * refused without a lookup), `unknown`, `revoked` or `expired`; the reason is for logs, never for the caller.
 */
export const authenticateBearer = (
  token: string,
): Effect.Effect<Principal, InvalidToken | SqlError.SqlError, SqlClient.SqlClient> =>
  isAccessTokenShaped(token)
    ? Effect.map(lookupBearer(accessTokenHash(token)), (found) => found.principal)
    : Effect.fail(new InvalidToken({ reason: "malformed" }))

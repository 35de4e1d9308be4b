import { SqlClient } from "@effect/sql"
import { DateTime, Effect } from "effect"
import type { AuthenticatedClient } from "./authenticate-client.js"

/** A token row as inserted: its id and when it expires (whole Unix seconds, database clock). */
export interface InsertedAccessToken {
  readonly tokenId: string
  readonly expiresAt: number
}

// One statement, atomic without a transaction of its own. FOR SHARE on the credential row orders it against a
// concurrent revocation or rotation, which updates that row in its own transaction: either this insert
// commits first and the revocation (a later statement) revokes the token, or it waits for the revocation to
// commit, re-checks the row, and inserts nothing. The expiry is on the database clock, rounded up to the
// whole second, so the published `expires_at` is exactly the instant from which the token is refused and the
// token lives at least the `expires_in` (the ttl) it is answered with, less than a second more; rounded down,
// it lived up to a second less than promised.
const insertStatement = `
  INSERT INTO access_tokens (token_hash, token_id, client_id, partner_id, created_at, expires_at)
  SELECT $1, $2, c.client_id, c.partner_id, now(),
         to_timestamp((ceil(extract(epoch FROM now())) + $3::int)::double precision)
  FROM client_credentials c
  WHERE c.client_id = $4 AND c.partner_id = $5 AND c.status = 'active'
    AND (c.secret_hash = $6 OR (c.previous_secret_hash = $6 AND c.previous_valid_until > $7))
  FOR SHARE OF c
  RETURNING token_id::text AS token_id, extract(epoch FROM expires_at)::bigint::text AS expires_at`

/**
 * Stores a new token's hash for an authenticated client, valid `ttlSeconds` from now; none when the
 * credential was revoked, or the secret it proved stopped being accepted, since it was checked.
 */
export const insertAccessToken = (request: {
  readonly tokenHash: string
  readonly tokenId: string
  readonly client: AuthenticatedClient
  readonly ttlSeconds: number
}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ token_id: string; expires_at: string }>(insertStatement, [
      request.tokenHash,
      request.tokenId,
      request.ttlSeconds,
      request.client.clientId,
      request.client.partnerId,
      request.client.secretHash,
      DateTime.toDate(request.client.checkedAt),
    ])
    const row = rows[0]
    return row === undefined
      ? null
      : ({ tokenId: row.token_id, expiresAt: Number(row.expires_at) } satisfies InsertedAccessToken)
  })

import { SqlClient, type SqlError } from "@effect/sql"
import { type InvalidClientCredentials, InvalidParams } from "@points/domain"
import { Effect } from "effect"
import { accessTokenHash } from "./access-token.js"
import { authenticateClient } from "./authenticate-client.js"
import { REVOKED_TOKEN_PREFIX, REVOKED_TOKENS_CHANNEL } from "./revoked-tokens-channel.js"

/**
 * Revoke Token (RFC 7009): the client authenticates as for Create Token (GH1001 otherwise) and revokes one of
 * its own tokens. An unknown token, or one already revoked, is a success that changes nothing (2.2). Another
 * client's token is refused (2.1: GH1006 naming `token`) and stays valid: a success would tell the caller it
 * was revoked when it was not. That says no more than the token itself would, used as a bearer. Answers whether
 * this call revoked a token (false for an unknown one, or one revoked before).
 */
export const revokeToken = (input: {
  readonly client_id: string
  readonly client_secret: string
  readonly token: string
}): Effect.Effect<
  boolean,
  InvalidClientCredentials | InvalidParams | SqlError.SqlError,
  SqlClient.SqlClient
> =>
  Effect.gen(function* () {
    const client = yield* authenticateClient(input.client_id, input.client_secret)
    const sql = yield* SqlClient.SqlClient
    const hash = accessTokenHash(input.token)
    // The NOTIFY is referenced by the outer query: a CTE that only reads runs only when something reads it.
    const holders = yield* sql<{ readonly client_id: string; readonly told: string | number }>`
      WITH revoked AS (
        UPDATE access_tokens SET revoked_at = now()
        WHERE token_hash = ${hash} AND client_id = ${client.clientId} AND revoked_at IS NULL
        RETURNING token_hash
      ), told AS (
        SELECT pg_notify(${REVOKED_TOKENS_CHANNEL}, ${REVOKED_TOKEN_PREFIX} || token_hash) FROM revoked
      )
      SELECT client_id::text AS client_id, (SELECT count(*) FROM told) AS told
      FROM access_tokens WHERE token_hash = ${hash}`
    if (holders.some((holder) => holder.client_id !== client.clientId)) {
      return yield* new InvalidParams({ field: "token", problem: "was not issued to this client" })
    }
    return holders.some((holder) => Number(holder.told) > 0)
  }).pipe(Effect.withSpan("auth.revokeToken"))

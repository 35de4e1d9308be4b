import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { REVOKED_TOKEN_PREFIX, REVOKED_TOKENS_CHANNEL } from "./revoked-tokens-channel.js"

/**
 * Revokes every live token of a client, for the revocation of its credential: run it in the transaction that
 * appends CredentialRevoked, so the credential and its tokens stop working together. Tokens already expired
 * are left alone (they are refused anyway). Every API process is told (see BearerTokens). Returns how many
 * were revoked.
 */
export const revokeClientTokens = (clientId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Each revoked token's hash is NOTIFYed (delivered at commit) for the processes that remember it.
    const rows = yield* sql<{ token_id: string }>`
      WITH revoked AS (
        UPDATE access_tokens SET revoked_at = now()
        WHERE client_id = ${clientId} AND revoked_at IS NULL AND expires_at > now()
        RETURNING token_id, token_hash
      )
      SELECT token_id, pg_notify(${REVOKED_TOKENS_CHANNEL}, ${REVOKED_TOKEN_PREFIX} || token_hash)::text AS told FROM revoked`
    return rows.length
  })

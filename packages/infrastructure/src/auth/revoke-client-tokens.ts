import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Revokes every live token of a client, for the revocation of its credential: run it in the transaction that
 * appends CredentialRevoked, so the credential and its tokens stop working together. Tokens already expired
 * are left alone (they are refused anyway). Returns how many were revoked.
 */
export const revokeClientTokens = (clientId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ token_id: string }>`
      UPDATE access_tokens SET revoked_at = now()
      WHERE client_id = ${clientId} AND revoked_at IS NULL AND expires_at > now()
      RETURNING token_id`
    return rows.length
  })

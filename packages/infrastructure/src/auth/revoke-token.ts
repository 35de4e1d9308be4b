import { SqlClient, type SqlError } from "@effect/sql"
import type { InvalidClientCredentials } from "@points/domain"
import { Effect } from "effect"
import { accessTokenHash } from "./access-token.js"
import { authenticateClient } from "./authenticate-client.js"

/**
 * Revoke Token (RFC 7009): the client authenticates as for Create Token (GH1001 otherwise) and revokes one of
 * its own tokens. An unknown token, one already revoked, or another client's token is a success that changes
 * nothing (2.2: the client learns nothing about tokens it does not hold).
 */
export const revokeToken = (input: {
  readonly client_id: string
  readonly client_secret: string
  readonly token: string
}): Effect.Effect<void, InvalidClientCredentials | SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const client = yield* authenticateClient(input.client_id, input.client_secret)
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      UPDATE access_tokens SET revoked_at = now()
      WHERE token_hash = ${accessTokenHash(input.token)} AND client_id = ${client.clientId}
        AND revoked_at IS NULL`
  }).pipe(Effect.withSpan("auth.revokeToken"))

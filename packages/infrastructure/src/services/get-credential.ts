import { SqlClient } from "@effect/sql"
import { type CredentialResource, isUuid, ResourceNotFound } from "@points/domain"
import { Effect } from "effect"

interface CredentialDatabaseRow {
  readonly client_id: string
  readonly name: string | null
  readonly status: "active" | "revoked"
  readonly created_at: Date
  readonly updated_at: Date
}

/**
 * A partner's client credential as the admin API shows it (never a secret, nor its hash); LE0002 naming the
 * client when the partner has none with this id. Reads the `client_credentials` read model.
 */
export const getCredential = (partnerId: string, clientId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = isUuid(clientId)
      ? yield* sql<CredentialDatabaseRow>`
          SELECT client_id::text AS client_id, name, status, created_at, updated_at FROM client_credentials
          WHERE partner_id = ${partnerId} AND client_id = ${clientId}`
      : []
    const row = rows[0]
    if (row === undefined) return yield* new ResourceNotFound({ resource: "client", id: clientId })
    return {
      client_id: row.client_id,
      name: row.name,
      status: row.status,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    } satisfies CredentialResource
  })

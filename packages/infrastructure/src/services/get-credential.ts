import { SqlClient } from "@effect/sql"
import { isUuid, ResourceNotFound } from "@points/domain"
import { Clock, Effect } from "effect"
import {
  CREDENTIAL_RESOURCE_COLUMNS,
  type CredentialResourceRow,
  credentialResourceOf,
} from "../projections/credentials.js"

/**
 * A partner's client credential as the admin API shows it (never a secret, nor its hash); LE0002 naming the
 * client when the partner has none with this id. Reads the `client_credentials` read model.
 */
export const getCredential = (partnerId: string, clientId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = isUuid(clientId)
      ? yield* sql.unsafe<CredentialResourceRow>(
          `SELECT ${CREDENTIAL_RESOURCE_COLUMNS} FROM client_credentials WHERE partner_id = $1 AND client_id = $2`,
          [partnerId, clientId],
        )
      : []
    const row = rows[0]
    if (row === undefined) return yield* new ResourceNotFound({ resource: "client", id: clientId })
    return credentialResourceOf(yield* Clock.currentTimeMillis)(row)
  })

import { SqlClient } from "@effect/sql"
import type { ClientCredential } from "@points/domain"
import { idAsIssued, isUuid } from "@points/domain"
import { Clock, Effect, Option } from "effect"
import { equals, type PageRequest, selectPage } from "./keyset-page.js"
import type { CredentialResource } from "./resources.js"
import { isoFromDatabase, isoOf } from "./row-batches.js"

/** A `client_credentials` row as the projection writes it: secrets only as hashes. */
export interface CredentialRow {
  readonly client_id: string
  readonly partner_id: string
  readonly name: string | null
  readonly secret_hash: string
  readonly previous_secret_hash: string | null
  readonly previous_valid_until: string | null
  readonly status: ClientCredential.CredentialStatus
  readonly created_at: string
  readonly updated_at: string
  readonly version: number
}

/** The row of a credential's state; none before it is issued. */
export const credentialRowOf = (
  partnerId: string,
  state: ClientCredential.CredentialState,
): CredentialRow | null =>
  state._tag === "Issued"
    ? {
        client_id: state.clientId,
        partner_id: partnerId,
        name: state.name,
        secret_hash: state.secretHash,
        previous_secret_hash: state.previousSecret?.secretHash ?? null,
        previous_valid_until: state.previousSecret === null ? null : isoOf(state.previousSecret.validUntil),
        status: state.status,
        created_at: isoOf(state.createdAt),
        updated_at: isoOf(state.updatedAt),
        version: state.version,
      }
    : null

const upsertStatement = `
  INSERT INTO client_credentials (client_id, partner_id, name, secret_hash, previous_secret_hash,
                                  previous_valid_until, status, created_at, updated_at, version)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
                       $7::text[], $8::timestamptz[], $9::timestamptz[], $10::int[])
  ON CONFLICT (client_id) DO UPDATE SET
    name = EXCLUDED.name, secret_hash = EXCLUDED.secret_hash,
    previous_secret_hash = EXCLUDED.previous_secret_hash, previous_valid_until = EXCLUDED.previous_valid_until,
    status = EXCLUDED.status, updated_at = EXCLUDED.updated_at, version = EXCLUDED.version
  WHERE client_credentials.partner_id = EXCLUDED.partner_id`

/** Inserts or replaces credential rows by client id, in one statement. */
export const upsertCredentials = (rows: ReadonlyArray<CredentialRow>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(upsertStatement, [
      rows.map((row) => row.client_id),
      rows.map((row) => row.partner_id),
      rows.map((row) => row.name),
      rows.map((row) => row.secret_hash),
      rows.map((row) => row.previous_secret_hash),
      rows.map((row) => row.previous_valid_until),
      rows.map((row) => row.status),
      rows.map((row) => row.created_at),
      rows.map((row) => row.updated_at),
      rows.map((row) => row.version),
    ]),
  )

/** A `client_credentials` row as `CREDENTIAL_RESOURCE_COLUMNS` selects it. */
export interface CredentialResourceRow {
  readonly client_id: string
  readonly name: string | null
  readonly status: ClientCredential.CredentialStatus
  readonly previous_valid_until: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

/** The columns `credentialResourceOf` reads. */
export const CREDENTIAL_RESOURCE_COLUMNS =
  "client_id, name, status, previous_valid_until, created_at, updated_at"

/**
 * Until when the secret a credential's latest rotation replaced still gets tokens, at `nowMillis`, or null
 * when it gets none: never rotated, its grace period over (strictly before its end), or the credential
 * revoked. The rule of ClientCredential.acceptedSecretHashes on the read model's row, for the token endpoint
 * and the admin API alike; grace periods are set on Effect's Clock, so they are judged on it too.
 */
export const replacedSecretValidUntil = (
  row: { readonly status: ClientCredential.CredentialStatus; readonly previous_valid_until: Date | null },
  nowMillis: number,
): Date | null =>
  row.status === "active" &&
  row.previous_valid_until !== null &&
  nowMillis < row.previous_valid_until.getTime()
    ? row.previous_valid_until
    : null

/** A credential's row as the admin API shows it, at `nowMillis` (Effect's Clock). */
export const credentialResourceOf =
  (nowMillis: number) =>
  (row: CredentialResourceRow): CredentialResource => {
    const replacedUntil = replacedSecretValidUntil(row, nowMillis)
    return {
      client_id: row.client_id,
      name: row.name,
      status: row.status,
      previous_secret_valid_until: replacedUntil === null ? null : isoFromDatabase(replacedUntil),
      created_at: isoFromDatabase(row.created_at),
      updated_at: isoFromDatabase(row.updated_at),
    }
  }

/** A page of a partner's client credentials (revoked ones included), oldest first; never a secret hash. */
export const listCredentials = (partnerId: string, request: PageRequest = {}) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    selectPage({
      list: "clients",
      table: "client_credentials",
      columns: CREDENTIAL_RESOURCE_COLUMNS,
      key: "client_id",
      scope: [equals("partner_id", partnerId)],
      filters: [],
      request,
      keyOf: (row: CredentialResourceRow) => row.client_id,
      toResource: credentialResourceOf(now),
    }),
  )

/** What the token endpoint checks a client secret against. Internal: holds hashes, never published. */
export interface CredentialForAuthentication {
  readonly client_id: string
  readonly partner_id: string
  readonly status: ClientCredential.CredentialStatus
  readonly secret_hash: string
  readonly previous_secret_hash: string | null
  readonly previous_valid_until: Date | null
}

/**
 * A credential by client id alone, for the token endpoint, which learns the partner from it; none when
 * unknown. A UUID in upper or mixed case names the same client (RFC 9562: case-insensitive on input). Compare
 * with `acceptedSecretHashes` rules: the previous hash only before `previous_valid_until`.
 */
export const findCredentialForAuthentication = (sentId: string) =>
  Effect.gen(function* () {
    const clientId = idAsIssued(sentId)
    if (!isUuid(clientId)) return Option.none<CredentialForAuthentication>()
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<CredentialForAuthentication>`
      SELECT client_id, partner_id, status, secret_hash, previous_secret_hash, previous_valid_until
      FROM client_credentials WHERE client_id = ${clientId}`
    return Option.fromNullable(rows[0])
  })

import { SqlClient } from "@effect/sql"
import { ResourceNotFound, type WebhookEndpoint } from "@points/domain"
import { Effect, Option } from "effect"
import { equals, type PageRequest, selectPage } from "./keyset-page.js"
import type { WebhookEndpointResource } from "./resources.js"
import { isoFromDatabase, isoOf } from "./row-batches.js"
import { selectById } from "./select-by-id.js"

/** A `webhook_endpoints` row as the projection writes it: the settings, never a secret. */
export interface WebhookEndpointRow {
  readonly id: string
  readonly partner_id: string
  readonly url: string
  readonly event_types: ReadonlyArray<WebhookEndpoint.PublicEventType>
  readonly description: string | null
  readonly enabled: boolean
  readonly disabled_reason: WebhookEndpoint.DisabledReason | null
  readonly created_at: string
  readonly updated_at: string
  readonly version: number
  /**
   * References into `webhook_signing_secrets`: the secret that signs, and the one the last rotation replaced
   * (at most one; a CHECK holds it to that), which signs too until its grace ends.
   */
  readonly secret_id: string
  readonly previous_secrets: ReadonlyArray<{ readonly id: string; readonly valid_until: string }>
}

/** The row of an endpoint's state; none before creation and after deletion (a deleted endpoint is gone). */
export const webhookEndpointRowOf = (
  partnerId: string,
  state: WebhookEndpoint.WebhookEndpointState,
): WebhookEndpointRow | null =>
  state._tag === "Live"
    ? {
        id: state.endpointId,
        partner_id: partnerId,
        url: state.url,
        event_types: state.eventTypes,
        description: state.description,
        enabled: state.enabled,
        disabled_reason: state.disabledReason,
        created_at: isoOf(state.createdAt),
        updated_at: isoOf(state.updatedAt),
        version: state.version,
        secret_id: state.secretId,
        previous_secrets:
          state.previousSecret === null
            ? []
            : [{ id: state.previousSecret.secretId, valid_until: isoOf(state.previousSecret.validUntil) }],
      }
    : null

const upsertStatement = `
  INSERT INTO webhook_endpoints (id, partner_id, url, event_types, description, enabled, disabled_reason,
                                 created_at, updated_at, version, secret_id, previous_secrets)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[], $5::text[], $6::boolean[], $7::text[],
                       $8::timestamptz[], $9::timestamptz[], $10::int[], $11::uuid[], $12::jsonb[])
  ON CONFLICT (id) DO UPDATE SET
    url = EXCLUDED.url, event_types = EXCLUDED.event_types, description = EXCLUDED.description,
    enabled = EXCLUDED.enabled, disabled_reason = EXCLUDED.disabled_reason, updated_at = EXCLUDED.updated_at,
    version = EXCLUDED.version, secret_id = EXCLUDED.secret_id, previous_secrets = EXCLUDED.previous_secrets
  WHERE webhook_endpoints.partner_id = EXCLUDED.partner_id`

/** Inserts or replaces webhook endpoint rows by id, in one statement. */
export const upsertWebhookEndpoints = (rows: ReadonlyArray<WebhookEndpointRow>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(upsertStatement, [
      rows.map((row) => row.id),
      rows.map((row) => row.partner_id),
      rows.map((row) => row.url),
      rows.map((row) => JSON.stringify(row.event_types)),
      rows.map((row) => row.description),
      rows.map((row) => row.enabled),
      rows.map((row) => row.disabled_reason),
      rows.map((row) => row.created_at),
      rows.map((row) => row.updated_at),
      rows.map((row) => row.version),
      rows.map((row) => row.secret_id),
      rows.map((row) => JSON.stringify(row.previous_secrets)),
    ]),
  )

/** Removes a deleted endpoint's row. */
export const deleteWebhookEndpoint = (partnerId: string, endpointId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partnerId} AND id = ${endpointId}`,
  )

/**
 * How many endpoints the partner has, for a creation to decide on: counted under the partner's lock for the
 * rest of the caller's transaction, so two creations at once count one after the other and cannot both take
 * the last place. Run it inside the transaction that creates the endpoint.
 */
export const countEndpointsForCreation = (partnerId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // First the lock the append takes anyway: a rebuild locks the log, then truncates the read models; a
    // writer that read a read model before locking the log would hold up the truncate while it waits for the
    // rebuild's lock on the log, a deadlock.
    yield* sql`LOCK TABLE events IN ROW EXCLUSIVE MODE`
    yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${partnerId}`}, 0))`
    // After the partner's lock, in its own statement: its snapshot sees every creation committed before it.
    const [row] = yield* sql<{ endpoints: number }>`
      SELECT count(*)::int AS endpoints FROM webhook_endpoints WHERE partner_id = ${partnerId}`
    return row?.endpoints ?? 0
  })

interface WebhookEndpointDatabaseRow {
  readonly id: string
  readonly url: string
  readonly event_types: ReadonlyArray<WebhookEndpoint.PublicEventType>
  readonly description: string | null
  readonly enabled: boolean
  readonly disabled_reason: WebhookEndpoint.DisabledReason | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly version: number
}

const columns = "id, url, event_types, description, enabled, disabled_reason, created_at, updated_at, version"

const toResource = (row: WebhookEndpointDatabaseRow): WebhookEndpointResource => ({
  id: row.id,
  url: row.url,
  event_types: row.event_types,
  description: row.description,
  enabled: row.enabled,
  disabled_reason: row.disabled_reason,
  created_at: isoFromDatabase(row.created_at),
  updated_at: isoFromDatabase(row.updated_at),
  version: row.version,
})

/** A partner's webhook endpoint; LE0002 when the partner has none with this id (deleted ones included). */
export const getWebhookEndpoint = (partnerId: string, endpointId: string) =>
  Effect.flatMap(
    selectById<WebhookEndpointDatabaseRow>({
      table: "webhook_endpoints",
      columns,
      partnerId,
      id: endpointId,
    }),
    Option.match({
      onNone: () => Effect.fail(new ResourceNotFound({ resource: "webhook endpoint", id: endpointId })),
      onSome: (row) => Effect.succeed(toResource(row)),
    }),
  )

/** A page of a partner's webhook endpoints, oldest first. */
export const listWebhookEndpoints = (partnerId: string, request: PageRequest) =>
  selectPage({
    list: "webhook_endpoints",
    table: "webhook_endpoints",
    columns,
    key: "id",
    scope: [equals("partner_id", partnerId)],
    filters: [],
    request,
    keyOf: (row: WebhookEndpointDatabaseRow) => row.id,
    toResource,
  })

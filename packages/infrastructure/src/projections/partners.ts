import { SqlClient } from "@effect/sql"
import { isUuid, type Partner, ResourceNotFound } from "@points/domain"
import { Effect } from "effect"
import { type PageRequest, selectPage } from "./keyset-page.js"
import type { PartnerResource } from "./resources.js"
import { isoFromDatabase, isoOf } from "./row-batches.js"

/** A `partners` row as the projection writes it; a partner's id is its `partner_id`. */
export interface PartnerRow {
  readonly id: string
  readonly name: string
  readonly created_at: string
}

/** The row of a partner's state; none before registration. */
export const partnerRowOf = (state: Partner.PartnerState): PartnerRow | null =>
  state._tag === "Registered"
    ? { id: state.partnerId, name: state.name, created_at: isoOf(state.createdAt) }
    : null

const upsertStatement = `
  INSERT INTO partners (id, name, created_at)
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[])
  ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name`

/** Inserts or replaces partner rows by id, in one statement. */
export const upsertPartners = (rows: ReadonlyArray<PartnerRow>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(upsertStatement, [
      rows.map((row) => row.id),
      rows.map((row) => row.name),
      rows.map((row) => row.created_at),
    ]),
  )

interface PartnerDatabaseRow {
  readonly id: string
  readonly name: string
  readonly created_at: Date
}

const toResource = (row: PartnerDatabaseRow): PartnerResource => ({
  id: row.id,
  name: row.name,
  created_at: isoFromDatabase(row.created_at),
})

/** A partner, for the platform's administrators; LE0002 when there is none with this id. */
export const getPartner = (partnerId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = isUuid(partnerId)
      ? yield* sql<PartnerDatabaseRow>`SELECT id, name, created_at FROM partners WHERE id = ${partnerId}`
      : []
    const row = rows[0]
    if (row === undefined) return yield* new ResourceNotFound({ resource: "partner", id: partnerId })
    return toResource(row)
  })

/** A page of every partner, oldest first: the admin API's list, the one query not scoped to a partner. */
export const listPartners = (request: PageRequest) =>
  selectPage({
    list: "partners",
    table: "partners",
    columns: "id, name, created_at",
    key: "id",
    scope: [],
    filters: [],
    request,
    keyOf: (row: PartnerDatabaseRow) => row.id,
    toResource,
  })

import { SqlClient } from "@effect/sql"
import { type Ledger, ResourceNotFound } from "@points/domain"
import { Effect, Option } from "effect"
import type { PointsAccountResource } from "./resources.js"
import { isoFromDatabase, isoOf, numberFromDatabase } from "./row-batches.js"
import { findUser } from "./users.js"

/** A `points_accounts` row as the projection writes it. */
export interface PointsAccountRow {
  readonly id: string
  readonly user_id: string
  readonly partner_id: string
  readonly balance: number
  readonly status: "open" | "closed"
  readonly created_at: string
  readonly updated_at: string
  readonly version: number
}

/** The row of a points account's state; none before the account is opened. */
export const pointsAccountRowOf = (partnerId: string, state: Ledger.LedgerState): PointsAccountRow | null =>
  state._tag === "NoAccount"
    ? null
    : {
        id: state.accountId,
        user_id: state.userId,
        partner_id: partnerId,
        balance: state.balance,
        status: state._tag === "Open" ? "open" : "closed",
        created_at: isoOf(state.createdAt),
        updated_at: isoOf(state.updatedAt),
        version: state.version,
      }

const upsertStatement = `
  INSERT INTO points_accounts (id, user_id, partner_id, balance, status, created_at, updated_at, version)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::bigint[], $5::text[], $6::timestamptz[],
                       $7::timestamptz[], $8::int[])
  ON CONFLICT (id) DO UPDATE SET
    balance = EXCLUDED.balance, status = EXCLUDED.status, updated_at = EXCLUDED.updated_at,
    version = EXCLUDED.version
  WHERE points_accounts.partner_id = EXCLUDED.partner_id`

/** The upsert of points account rows as a statement and its parameters, to run alone or before another. */
export const pointsAccountsUpsert = (rows: ReadonlyArray<PointsAccountRow>) => ({
  statement: upsertStatement,
  params: [
    rows.map((row) => row.id),
    rows.map((row) => row.user_id),
    rows.map((row) => row.partner_id),
    rows.map((row) => row.balance),
    rows.map((row) => row.status),
    rows.map((row) => row.created_at),
    rows.map((row) => row.updated_at),
    rows.map((row) => row.version),
  ],
})

/** Inserts or replaces points account rows by id, in one statement. */
export const upsertPointsAccounts = (rows: ReadonlyArray<PointsAccountRow>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const upsert = pointsAccountsUpsert(rows)
    return sql.unsafe(upsert.statement, upsert.params)
  })

interface PointsAccountDatabaseRow {
  readonly id: string
  readonly user_id: string
  readonly balance: string
  readonly status: "open" | "closed"
  readonly created_at: Date
  readonly updated_at: Date
  readonly version: number
}

const toResource = (row: PointsAccountDatabaseRow): PointsAccountResource => ({
  id: row.id,
  user_id: row.user_id,
  balance: numberFromDatabase(row.balance),
  status: row.status,
  created_at: isoFromDatabase(row.created_at),
  updated_at: isoFromDatabase(row.updated_at),
  version: row.version,
})

/**
 * A partner's user's points account. LE0002 naming the user when the partner has no such user, naming the
 * points account when the user has none yet.
 */
export const getPointsAccount = (partnerId: string, userId: string) =>
  Effect.gen(function* () {
    const user = yield* findUser(partnerId, userId)
    if (Option.isNone(user)) return yield* new ResourceNotFound({ resource: "user", id: userId })
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<PointsAccountDatabaseRow>`
      SELECT id, user_id, balance, status, created_at, updated_at, version FROM points_accounts
      WHERE partner_id = ${partnerId} AND user_id = ${userId}`
    const row = rows[0]
    if (row === undefined) return yield* new ResourceNotFound({ resource: "points account", id: userId })
    return toResource(row)
  })

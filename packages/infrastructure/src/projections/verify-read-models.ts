import { SqlClient } from "@effect/sql"
import { InvariantViolation } from "@points/domain"
import { Effect } from "effect"
import type { CredentialRow } from "./credentials.js"
import { type FoldedStream, finalRows, foldRows, projectedCategories } from "./fold-log.js"
import type { OrderRow } from "./orders.js"
import type { PartnerRow } from "./partners.js"
import type { PointsAccountRow } from "./points-accounts.js"
import { countEvents, positionAfter, readLockedLogAfter } from "./read-locked-log.js"
import { type ReadModelTable, readModelTables } from "./read-model-tables.js"
import { checkedBatchSize, timedTransaction } from "./rebuild-read-models.js"
import { inBatches } from "./row-batches.js"
import type { TransactionRow } from "./transactions.js"
import type { UserRow } from "./users.js"
import type { WebhookEndpointRow } from "./webhook-endpoints.js"

/** How one read-model table compares with what the log says it should hold. */
export interface TableVerification {
  /** Rows the log implies. */
  readonly expected: number
  /** Rows the log implies that the table lacks or holds otherwise. */
  readonly missing: number
  /** Rows the table holds that the log does not imply, or holds otherwise (a changed row counts here too). */
  readonly unexpected: number
  /** The keys of the first rows found different, missing or unexpected (at most MAX_EXAMPLES). */
  readonly examples: ReadonlyArray<string>
}

/** What a verification found: every table's comparison, and whether they all match the log. */
export interface VerifyResult {
  readonly events: number
  readonly consistent: boolean
  readonly tables: { readonly [Table in ReadModelTable]: TableVerification }
  readonly seconds: number
}

/** The most keys a verification reports per table. */
export const MAX_EXAMPLES = 10

// The columns each table is compared on: every field of the row its projection writes (a table's other
// columns, if any, are not derived from the log).
const compared = {
  partners: ["id", "name", "created_at"] satisfies ReadonlyArray<keyof PartnerRow>,
  client_credentials: [
    "client_id",
    "partner_id",
    "name",
    "secret_hash",
    "previous_secret_hash",
    "previous_valid_until",
    "status",
    "created_at",
    "updated_at",
    "version",
  ] satisfies ReadonlyArray<keyof CredentialRow>,
  webhook_endpoints: [
    "id",
    "partner_id",
    "url",
    "event_types",
    "description",
    "enabled",
    "disabled_reason",
    "created_at",
    "updated_at",
    "version",
    "secret_id",
    "previous_secrets",
  ] satisfies ReadonlyArray<keyof WebhookEndpointRow>,
  users: [
    "id",
    "partner_id",
    "partner_user_id",
    "email",
    "name",
    "status",
    "points_account_id",
    "created_at",
    "updated_at",
    "version",
  ] satisfies ReadonlyArray<keyof UserRow>,
  points_accounts: [
    "id",
    "user_id",
    "partner_id",
    "balance",
    "status",
    "created_at",
    "updated_at",
    "version",
  ] satisfies ReadonlyArray<keyof PointsAccountRow>,
  points_transactions: [
    "id",
    "partner_id",
    "account_id",
    "user_id",
    "type",
    "amount",
    "balance_after",
    "reference_id",
    "description",
    "order_id",
    "created_at",
    "global_position",
  ] satisfies ReadonlyArray<keyof TransactionRow>,
  orders: [
    "id",
    "partner_id",
    "user_id",
    "reference_id",
    "status",
    "items",
    "total_points",
    "debit_transaction_id",
    "failure_reason",
    "status_history",
    "created_at",
    "updated_at",
    "version",
  ] satisfies ReadonlyArray<keyof OrderRow>,
} as const satisfies { readonly [Table in ReadModelTable]: ReadonlyArray<string> }

const expectedTable = (table: ReadModelTable) => `verify_expected_${table}`

// A temporary table of the compared columns, with their types, for the rows the log implies; dropped at the
// end of the transaction.
const createExpected = (table: ReadModelTable) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(
      `CREATE TEMPORARY TABLE ${expectedTable(table)} ON COMMIT DROP AS
       SELECT ${compared[table].join(", ")} FROM ${table} WITH NO DATA`,
    ),
  )

// Rows go over as one JSON array per statement, each field into its column by name and type.
const insertExpected = (table: ReadModelTable) => (rows: ReadonlyArray<object>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(
      `INSERT INTO ${expectedTable(table)}
       SELECT ${compared[table].join(", ")} FROM jsonb_populate_recordset(NULL::${expectedTable(table)}, $1::jsonb)`,
      [JSON.stringify(rows)],
    ),
  )

// The rows of one side that the other lacks, as many times as they occur (EXCEPT ALL): their count and the
// first keys.
const difference = (table: ReadModelTable, from: string, without: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const columns = compared[table].join(", ")
    const key = readModelTables[table]
    return sql.unsafe<{ count: string; examples: ReadonlyArray<string> | null }>(
      `SELECT count(*)::text AS count, (array_agg(${key}::text ORDER BY ${key}::text))[1:${MAX_EXAMPLES}] AS examples
       FROM (SELECT ${columns} FROM ${from} EXCEPT ALL SELECT ${columns} FROM ${without}) AS different`,
    )
  })

const compare = (table: ReadModelTable, expected: number) =>
  Effect.gen(function* () {
    const [missing] = yield* difference(table, expectedTable(table), table)
    const [unexpected] = yield* difference(table, table, expectedTable(table))
    const examples = [...new Set([...(missing?.examples ?? []), ...(unexpected?.examples ?? [])])].sort()
    return {
      expected,
      missing: Number(missing?.count ?? 0),
      unexpected: Number(unexpected?.count ?? 0),
      examples: examples.slice(0, MAX_EXAMPLES),
    } satisfies TableVerification
  })

/** How a verification reads: its batch size (the rebuild's limits). */
export interface VerifyOptions {
  readonly batchSize?: number
}

/**
 * Checks that every read model holds exactly what the event log implies, without changing or locking
 * anything: in one REPEATABLE READ transaction (one snapshot of the log and the tables, which inline
 * projection commits together), the log is folded as a rebuild folds it, the rows it implies go to temporary
 * tables, and each table is compared with them both ways. Writers carry on meanwhile; what they commit after
 * the snapshot is in neither side. Drift (a row edited by hand, a projection bug) shows as missing and
 * unexpected rows, with the keys of the first ones.
 */
export const verifyReadModels = (options: VerifyOptions = {}) =>
  Effect.gen(function* () {
    const batchSize = yield* checkedBatchSize(options.batchSize)
    const { result, seconds } = yield* timedTransaction((sql) =>
      Effect.gen(function* () {
        yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`
        const tables = Object.keys(readModelTables) as Array<ReadModelTable>
        yield* Effect.forEach(tables, createExpected, { discard: true })
        const total = yield* countEvents
        const streams = new Map<string, FoldedStream>()
        let transactions = 0
        let read = 0
        let position = 0n
        // The snapshot does not move: the count taken in it bounds the reads.
        for (let batch = 0; batch <= Math.ceil(total / batchSize); batch++) {
          const rows = yield* readLockedLogAfter(position, batchSize, projectedCategories)
          const last = rows.at(-1)
          if (last === undefined) break
          read += rows.length
          position = positionAfter(last)
          const movements: Array<TransactionRow> = []
          yield* foldRows(rows, streams, movements)
          yield* inBatches(movements, batchSize, insertExpected("points_transactions"))
          transactions += movements.length
        }
        if (read !== total) {
          return yield* Effect.die(new InvariantViolation(`verify read ${read} of the log's ${total} events`))
        }
        const rows = finalRows(streams)
        const expected: { readonly [Table in ReadModelTable]?: ReadonlyArray<object> } = {
          partners: rows.partners,
          client_credentials: rows.credentials,
          webhook_endpoints: rows.endpoints,
          users: rows.users,
          points_accounts: rows.accounts,
          orders: rows.orders,
        }
        const byTable: Partial<Record<ReadModelTable, TableVerification>> = {}
        for (const table of tables) {
          const tableRows = expected[table]
          if (tableRows !== undefined) yield* inBatches(tableRows, batchSize, insertExpected(table))
          byTable[table] = yield* compare(table, tableRows?.length ?? transactions)
        }
        const consistent = Object.values(byTable).every((v) => v.missing === 0 && v.unexpected === 0)
        return { events: read, consistent, tables: byTable as VerifyResult["tables"] }
      }),
    )
    return { ...result, seconds } satisfies VerifyResult
  })

import { SqlClient } from "@effect/sql"
import { Ledger, ResourceNotFound } from "@points/domain"
import { Effect, Option } from "effect"
import { duplicateReferenceAs } from "./duplicate-reference.js"
import { equals, type PageRequest, textEquals, uuidEquals } from "./keyset-page.js"
import { selectPageOfCommits } from "./late-commit-page.js"
import type { TransactionResource } from "./resources.js"
import { isoFromDatabase, isoOf, numberFromDatabase } from "./row-batches.js"
import { selectById } from "./select-by-id.js"

/** A `points_transactions` row as the projection writes it; `global_position` is the event's place in the log. */
export interface TransactionRow {
  readonly id: string
  readonly partner_id: string
  readonly account_id: string
  readonly user_id: string
  readonly type: Ledger.TransactionType
  readonly amount: number
  readonly balance_after: number
  readonly reference_id: string
  readonly description: string | null
  readonly order_id: string | null
  readonly created_at: string
  readonly global_position: string
}

const movementTags: ReadonlySet<string> = new Set<Ledger.MovementEvent["_tag"]>([
  "PointsAdded",
  "PointsSubtracted",
  "OrderDebited",
  "OrderRefunded",
])

/** True for the ledger events that move points, each of which is one transaction. */
export const isMovement = (event: Ledger.LedgerEvent): event is Ledger.MovementEvent =>
  movementTags.has(event._tag)

/** The row of a movement event: the transaction the ledger publishes for it, and where the log holds it. */
export const transactionRowOf = (
  partnerId: string,
  globalPosition: bigint,
  movement: Ledger.MovementEvent,
): TransactionRow => {
  const transaction = Ledger.transactionOf(movement)
  return {
    id: transaction.transactionId,
    partner_id: partnerId,
    account_id: transaction.accountId,
    user_id: transaction.userId,
    type: transaction.type,
    amount: transaction.amount,
    balance_after: transaction.balanceAfter,
    reference_id: transaction.referenceId,
    description: transaction.description,
    order_id: transaction.orderId,
    created_at: isoOf(transaction.createdAt),
    global_position: String(globalPosition),
  }
}

// A plain INSERT: transactions are immutable, so a second row of one id is a bug that must fail loudly, and a
// second add or subtract with a partner's reference id fails on points_transactions_unique_reference.
const insertStatement = `
  INSERT INTO points_transactions (id, partner_id, account_id, user_id, type, amount, balance_after,
                                   reference_id, description, order_id, created_at, global_position)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::bigint[], $7::bigint[],
                       $8::text[], $9::text[], $10::uuid[], $11::timestamptz[], $12::bigint[])`

/** The parameters of the insert statement ($1..$12), column by column. */
export const transactionColumns = (rows: ReadonlyArray<TransactionRow>): ReadonlyArray<unknown> => [
  rows.map((row) => row.id),
  rows.map((row) => row.partner_id),
  rows.map((row) => row.account_id),
  rows.map((row) => row.user_id),
  rows.map((row) => row.type),
  rows.map((row) => row.amount),
  rows.map((row) => row.balance_after),
  rows.map((row) => row.reference_id),
  rows.map((row) => row.description),
  rows.map((row) => row.order_id),
  rows.map((row) => row.created_at),
  rows.map((row) => row.global_position),
]

/** Inserts transaction rows in one statement; LE0006 when an add or subtract reuses a reference id. */
export const insertTransactions = (rows: ReadonlyArray<TransactionRow>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(insertStatement, transactionColumns(rows))).pipe(
    duplicateReferenceAs("transaction", movedReference(rows)),
  )

/** A statement and its parameters ($1..$n), to run alone or as a data-modifying CTE before another. */
export interface StatementPart {
  readonly statement: string
  readonly params: ReadonlyArray<unknown>
}

/**
 * Inserts transaction rows as `insertTransactions` does, after other statements (data-modifying CTEs with
 * their own parameters), in the same round trip.
 */
export const insertTransactionsAfter = (
  before: ReadonlyArray<StatementPart>,
  rows: ReadonlyArray<TransactionRow>,
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const ctes: Array<string> = []
    const params: Array<unknown> = []
    for (const [index, part] of before.entries()) {
      ctes.push(`before_${index} AS (${renumbered(part.statement, params.length)})`)
      params.push(...part.params)
    }
    const insert = renumbered(insertStatement, params.length)
    params.push(...transactionColumns(rows))
    return sql.unsafe(ctes.length === 0 ? insert : `WITH ${ctes.join(", ")} ${insert}`, params)
  }).pipe(duplicateReferenceAs("transaction", movedReference(rows)))

// The reference id an add or subtract among the rows carries, to name in LE0006.
const movedReference = (rows: ReadonlyArray<TransactionRow>) =>
  rows.find((row) => row.type === "add" || row.type === "subtract")?.reference_id ?? ""

// A statement's $n parameters moved up by `offset`, to follow another statement's in one round trip.
const renumbered = (statement: string, offset: number) =>
  offset === 0 ? statement : statement.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)

interface TransactionDatabaseRow {
  readonly id: string
  readonly account_id: string
  readonly user_id: string
  readonly type: Ledger.TransactionType
  readonly amount: string
  readonly balance_after: string
  readonly reference_id: string
  readonly description: string | null
  readonly order_id: string | null
  readonly created_at: Date
  readonly global_position: string
}

const columns =
  "id, account_id, user_id, type, amount, balance_after, reference_id, description, order_id, created_at, global_position"

/**
 * The resource of a transaction row as the projection writes it: what its GET answers once the row is
 * committed (a transaction never changes), so a write can answer it without reading it back.
 */
export const transactionResourceOf = (
  row: Omit<TransactionRow, "partner_id" | "global_position">,
): TransactionResource => ({
  id: row.id,
  account_id: row.account_id,
  user_id: row.user_id,
  type: row.type,
  amount: row.amount,
  balance_after: row.balance_after,
  reference_id: row.reference_id,
  description: row.description,
  order_id: row.order_id,
  created_at: row.created_at,
  // Transactions are immutable: every one is at its first and only version.
  version: 1,
})

const toResource = (row: TransactionDatabaseRow): TransactionResource =>
  transactionResourceOf({
    ...row,
    amount: numberFromDatabase(row.amount),
    balance_after: numberFromDatabase(row.balance_after),
    created_at: isoFromDatabase(row.created_at),
  })

/** A partner's transaction; LE0002 when the partner has none with this id. */
export const getTransaction = (partnerId: string, transactionId: string) =>
  Effect.flatMap(
    selectById<TransactionDatabaseRow>({
      table: "points_transactions",
      columns,
      partnerId,
      id: transactionId,
    }),
    Option.match({
      onNone: () => Effect.fail(new ResourceNotFound({ resource: "transaction", id: transactionId })),
      onSome: (row) => Effect.succeed(toResource(row)),
    }),
  )

/** What `GET /api/points/transactions` filters and pages by. */
export interface FindTransactionsRequest extends PageRequest {
  readonly reference_id?: string | undefined
  readonly user_id?: string | undefined
}

/**
 * A page of a partner's transactions in ledger order (oldest first, each account's in the order its balance
 * moved, so `balance_after` follows from one to the next), optionally of one reference id and/or one user.
 */
export const findTransactions = (partnerId: string, request: FindTransactionsRequest) =>
  selectPageOfCommits({
    list: "transactions",
    table: "points_transactions",
    columns,
    key: "id",
    orderBy: "global_position",
    scope: [equals("partner_id", partnerId)],
    filters: [
      ...(request.reference_id === undefined ? [] : [textEquals("reference_id", request.reference_id)]),
      ...(request.user_id === undefined ? [] : [uuidEquals("user_id", request.user_id)]),
    ],
    request,
    keyOf: (row: TransactionDatabaseRow & { readonly seen: string }) => row.id,
    toResource,
  })

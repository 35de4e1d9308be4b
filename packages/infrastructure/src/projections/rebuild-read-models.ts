import { SqlClient, type SqlError } from "@effect/sql"
import { type DuplicateReferenceId, InvariantViolation } from "@points/domain"
import { Effect, Fiber } from "effect"
import { upsertCredentials } from "./credentials.js"
import { type FoldedStream, finalRows, foldRows, projectedCategories } from "./fold-log.js"
import { upsertOrders } from "./orders.js"
import { upsertPartners } from "./partners.js"
import { upsertPointsAccounts } from "./points-accounts.js"
import {
  countEvents,
  type LogRow,
  lockLogAgainstWriters,
  positionAfter,
  readLockedLogAfter,
} from "./read-locked-log.js"
import { type ReadModelTable, readModelTables } from "./read-model-tables.js"
import { inBatches, MAX_ROWS_PER_STATEMENT } from "./row-batches.js"
import { insertTransactions, type TransactionRow } from "./transactions.js"
import { upsertUsers } from "./users.js"
import { upsertWebhookEndpoints } from "./webhook-endpoints.js"

/** What a rebuild did, and how fast. */
export interface RebuildResult {
  /** Events read from the log. */
  readonly events: number
  /** Events folded: those of streams with a read model (the others, reservations, are only counted). */
  readonly foldedEvents: number
  /** Streams folded (those of categories with a read model). */
  readonly streams: number
  /** Rows written per table. */
  readonly rows: { readonly [Table in ReadModelTable]: number }
  readonly seconds: number
  readonly eventsPerSecond: number
}

/** How many events a rebuild reads, and rows it writes, per statement unless told otherwise. */
export const DEFAULT_REBUILD_BATCH_SIZE = 5_000

/** The largest batch a rebuild accepts (one statement's rows). */
export const MAX_REBUILD_BATCH_SIZE = MAX_ROWS_PER_STATEMENT

/** A rebuild's or verification's batch size: the default, or the one given if it can be bounded (else a defect). */
export const checkedBatchSize = (size: number | undefined) => {
  const batchSize = size ?? DEFAULT_REBUILD_BATCH_SIZE
  return Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= MAX_REBUILD_BATCH_SIZE
    ? Effect.succeed(batchSize)
    : Effect.dieMessage(`batchSize must be an integer from 1 to ${MAX_REBUILD_BATCH_SIZE}`)
}

/** Runs `work` in one transaction, and says how long that took in seconds. */
export const timedTransaction = <A, E, R>(work: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const started = performance.now()
    const result = yield* sql.withTransaction(work(sql))
    return { result, seconds: (performance.now() - started) / 1000 }
  })

/** How far a rebuild has read: reported after every batch, for a progress bar. */
export interface RebuildProgress {
  readonly read: number
  readonly total: number
}

/** How a rebuild runs: its batch size, and who hears of its progress (nobody unless told). */
export interface RebuildOptions {
  readonly batchSize?: number
  readonly onProgress?: (progress: RebuildProgress) => Effect.Effect<void>
}

/**
 * Rebuilds every read model from the event log, in one transaction: keeps writers out of the log, truncates
 * the read-model tables, reads the whole log in log order in batches, folds each stream through its
 * decider in memory (transaction rows are written as their movements are read), then writes each stream's
 * final row with the same row-from-state functions and statements the inline projection uses. So the tables
 * end exactly as inline projection left them. Readers of the read models wait for it (TRUNCATE locks the
 * tables) and then see the new ones, never a half-built one; writers wait for it too.
 */
export const rebuildReadModels = (options: RebuildOptions = {}) =>
  Effect.gen(function* () {
    const batchSize = yield* checkedBatchSize(options.batchSize)
    const { result, seconds } = yield* timedTransaction((sql) =>
      Effect.gen(function* () {
        // The lock first: a writer holding events it has not projected yet would wait on the truncated tables
        // while this transaction waits on its events, a deadlock.
        yield* lockLogAgainstWriters
        yield* sql.unsafe(`TRUNCATE ${Object.keys(readModelTables).join(", ")}`)
        const total = yield* countEvents
        const streams = new Map<string, FoldedStream>()
        let transactions: Array<TransactionRow> = []
        let transactionCount = 0
        let read = 0
        let foldedEvents = 0
        // Reads run one batch ahead and transaction rows are written behind, on the transaction's connection,
        // so that the server reads and writes while this process decodes and folds.
        const readAfter = (position: bigint) =>
          Effect.fork(readLockedLogAfter(position, batchSize, projectedCategories))
        let reading = total > 0 ? yield* readAfter(0n) : null
        let writing: Fiber.Fiber<void, SqlError.SqlError | DuplicateReferenceId> | null = null
        // Bounded by the count taken under the lock: the log cannot grow while this runs.
        const maxBatches = Math.ceil(total / batchSize) + 1
        for (let batch = 0; batch < maxBatches && reading !== null; batch++) {
          const rows: ReadonlyArray<LogRow> = yield* Fiber.join(reading)
          reading = null
          const last = rows.at(-1)
          if (last === undefined) break
          read += rows.length
          if (read < total) reading = yield* readAfter(positionAfter(last))
          foldedEvents += yield* foldRows(rows, streams, transactions)
          if (options.onProgress !== undefined) yield* options.onProgress({ read, total })
          if (transactions.length >= batchSize) {
            if (writing !== null) yield* Fiber.join(writing)
            writing = yield* Effect.fork(inBatches(transactions, batchSize, insertTransactions))
            transactionCount += transactions.length
            transactions = []
          }
        }
        if (writing !== null) yield* Fiber.join(writing)
        if (read !== total) {
          return yield* Effect.die(
            new InvariantViolation(`rebuild read ${read} of the log's ${total} events`),
          )
        }
        yield* inBatches(transactions, batchSize, insertTransactions)
        transactionCount += transactions.length
        const rows = finalRows(streams)
        yield* inBatches(rows.partners, batchSize, upsertPartners)
        yield* inBatches(rows.credentials, batchSize, upsertCredentials)
        yield* inBatches(rows.endpoints, batchSize, upsertWebhookEndpoints)
        yield* inBatches(rows.accounts, batchSize, upsertPointsAccounts)
        yield* inBatches(rows.users, batchSize, upsertUsers)
        yield* inBatches(rows.orders, batchSize, upsertOrders)
        return {
          events: read,
          foldedEvents,
          streams: streams.size,
          rows: {
            partners: rows.partners.length,
            client_credentials: rows.credentials.length,
            webhook_endpoints: rows.endpoints.length,
            users: rows.users.length,
            points_accounts: rows.accounts.length,
            points_transactions: transactionCount,
            orders: rows.orders.length,
          },
        }
      }),
    )
    return {
      ...result,
      seconds,
      eventsPerSecond: seconds > 0 ? Math.round(result.events / seconds) : 0,
    } satisfies RebuildResult
  })

import { SqlClient, type SqlError } from "@effect/sql"
import {
  ClientCredential,
  type Decider,
  type DuplicateReferenceId,
  type EventCatalog,
  InvariantViolation,
  Ledger,
  Order,
  Partner,
  User,
  WebhookEndpoint,
} from "@points/domain"
import { Effect, Fiber } from "effect"
import { type LogCheckpoint, logStart } from "../event-store/recorded-event.js"
import { categories, categoryOf } from "../event-store/stream-id.js"
import { type CredentialRow, credentialRowOf, upsertCredentials } from "./credentials.js"
import { type OrderRow, orderRowOf, upsertOrders } from "./orders.js"
import { type PartnerRow, partnerRowOf, upsertPartners } from "./partners.js"
import { type PointsAccountRow, pointsAccountRowOf, upsertPointsAccounts } from "./points-accounts.js"
import {
  checkpointAfter,
  countEvents,
  decodeLogRow,
  type LogRow,
  lockLogAgainstWriters,
  readLockedLogAfter,
} from "./read-locked-log.js"
import { type ReadModelTable, readModelTables } from "./read-model-tables.js"
import { inBatches, MAX_ROWS_PER_STATEMENT } from "./row-batches.js"
import { insertTransactions, isMovement, type TransactionRow, transactionRowOf } from "./transactions.js"
import { type UserRow, upsertUsers, userRowOf } from "./users.js"
import { upsertWebhookEndpoints, type WebhookEndpointRow, webhookEndpointRowOf } from "./webhook-endpoints.js"

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

// The aggregates with read models; a stream of any other category (reference reservations) is only counted.
const deciders: Readonly<Record<string, Decider<unknown, unknown, unknown, unknown>>> = {
  user: User.decider,
  ledger: Ledger.decider,
  order: Order.decider,
  webhook: WebhookEndpoint.decider,
  credential: ClientCredential.decider,
  partner: Partner.decider,
} as unknown as Readonly<Record<string, Decider<unknown, unknown, unknown, unknown>>>

interface FoldedStream {
  readonly category: string
  readonly partnerId: string
  version: bigint
  state: unknown
}

// Collects the row of each stream's final state; a state without a row (a deleted endpoint) adds none.
const finalRows = (streams: ReadonlyMap<string, FoldedStream>) => {
  const partners: Array<PartnerRow> = []
  const credentials: Array<CredentialRow> = []
  const endpoints: Array<WebhookEndpointRow> = []
  const users: Array<UserRow> = []
  const accounts: Array<PointsAccountRow> = []
  const orders: Array<OrderRow> = []
  const add = <Row>(rows: Array<Row>, row: Row | null) => {
    if (row !== null) rows.push(row)
  }
  for (const { category, partnerId, state } of streams.values()) {
    if (category === "partner") add(partners, partnerRowOf(state as Partner.PartnerState))
    if (category === "credential")
      add(credentials, credentialRowOf(partnerId, state as ClientCredential.CredentialState))
    if (category === "webhook")
      add(endpoints, webhookEndpointRowOf(partnerId, state as WebhookEndpoint.WebhookEndpointState))
    if (category === "user") add(users, userRowOf(partnerId, state as User.UserState))
    if (category === "ledger") add(accounts, pointsAccountRowOf(partnerId, state as Ledger.LedgerState))
    if (category === "order") add(orders, orderRowOf(partnerId, state as Order.OrderState))
  }
  // A user stream names its account (PointsAccountLinked) unless the account was opened before that event
  // existed; the ledger always knows it (one account per user and partner).
  const accountOfUser = new Map(
    accounts.map((account) => [`${account.partner_id}:${account.user_id}`, account.id]),
  )
  const linkedUsers = users.map((user) => ({
    ...user,
    points_account_id: accountOfUser.get(`${user.partner_id}:${user.id}`) ?? null,
  }))
  return { partners, credentials, endpoints, users: linkedUsers, accounts, orders }
}

const projectedCategories = Object.keys(deciders)

/**
 * Folds a batch of the log into the streams' states, and collects the transaction row of every movement.
 * Streams of other categories are only counted. Dies on a stream read out of order: a corrupt log.
 */
const foldRows = (
  rows: ReadonlyArray<LogRow>,
  streams: Map<string, FoldedStream>,
  transactions: Array<TransactionRow>,
) =>
  Effect.gen(function* () {
    let folded = 0
    for (const row of rows) {
      const category = categoryOf(row.stream_id)
      const decider = deciders[category]
      if (decider === undefined) continue
      folded++
      const event = yield* decodeLogRow(row, categories[category] as unknown as EventCatalog<unknown>)
      const version = BigInt(row.stream_version)
      const stream = streams.get(row.stream_id) ?? {
        category,
        partnerId: row.partner_id,
        version: 0n,
        state: decider.initialState,
      }
      if (version !== stream.version + 1n || stream.partnerId !== row.partner_id) {
        return yield* Effect.die(
          new InvariantViolation(
            `stream ${row.stream_id} read out of order: version ${version} after ${stream.version}`,
          ),
        )
      }
      stream.state = decider.evolve(stream.state, event)
      stream.version = version
      streams.set(row.stream_id, stream)
      const movement = event as Ledger.LedgerEvent
      if (category === "ledger" && isMovement(movement)) {
        transactions.push(transactionRowOf(row.partner_id, BigInt(row.global_position), movement))
      }
    }
    return folded
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
 * the read-model tables, reads the whole log in commit order in batches, folds each stream through its
 * decider in memory (transaction rows are written as their movements are read), then writes each stream's
 * final row with the same row-from-state functions and statements the inline projection uses. So the tables
 * end exactly as inline projection left them. Readers of the read models wait for it (TRUNCATE locks the
 * tables) and then see the new ones, never a half-built one; writers wait for it too.
 */
export const rebuildReadModels = (options: RebuildOptions = {}) =>
  Effect.gen(function* () {
    const batchSize = options.batchSize ?? DEFAULT_REBUILD_BATCH_SIZE
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_REBUILD_BATCH_SIZE) {
      return yield* Effect.dieMessage(`batchSize must be an integer from 1 to ${MAX_REBUILD_BATCH_SIZE}`)
    }
    const sql = yield* SqlClient.SqlClient
    const started = performance.now()
    const result = yield* sql.withTransaction(
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
        const readAfter = (checkpoint: LogCheckpoint) =>
          Effect.fork(readLockedLogAfter(checkpoint, batchSize, projectedCategories))
        let reading = total > 0 ? yield* readAfter(logStart) : null
        let writing: Fiber.Fiber<void, SqlError.SqlError | DuplicateReferenceId> | null = null
        // Bounded by the count taken under the lock: the log cannot grow while this runs.
        const maxBatches = Math.ceil(total / batchSize) + 1
        for (let batch = 0; batch < maxBatches && reading !== null; batch++) {
          const rows: ReadonlyArray<LogRow> = yield* Fiber.join(reading)
          reading = null
          const last = rows.at(-1)
          if (last === undefined) break
          read += rows.length
          if (read < total) reading = yield* readAfter(checkpointAfter(last))
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
    const seconds = (performance.now() - started) / 1000
    return {
      ...result,
      seconds,
      eventsPerSecond: seconds > 0 ? Math.round(result.events / seconds) : 0,
    } satisfies RebuildResult
  })

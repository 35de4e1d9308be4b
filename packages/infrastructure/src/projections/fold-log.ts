import {
  ClientCredential,
  type Decider,
  type EventCatalog,
  InvariantViolation,
  Ledger,
  Order,
  Partner,
  User,
  WebhookEndpoint,
} from "@points/domain"
import { Effect } from "effect"
import { categories, categoryOf } from "../event-store/stream-id.js"
import { type CredentialRow, credentialRowOf } from "./credentials.js"
import { type OrderRow, orderRowOf } from "./orders.js"
import { type PartnerRow, partnerRowOf } from "./partners.js"
import { type PointsAccountRow, pointsAccountRowOf } from "./points-accounts.js"
import { decodeLogRow, type LogRow } from "./read-locked-log.js"
import { isMovement, type TransactionRow, transactionRowOf } from "./transactions.js"
import { type UserRow, userRowOf } from "./users.js"
import { type WebhookEndpointRow, webhookEndpointRowOf } from "./webhook-endpoints.js"

// The aggregates with read models; a stream of any other category (reference reservations) is only counted.
const deciders: Readonly<Record<string, Decider<unknown, unknown, unknown, unknown>>> = {
  user: User.decider,
  ledger: Ledger.decider,
  order: Order.decider,
  webhook: WebhookEndpoint.decider,
  credential: ClientCredential.decider,
  partner: Partner.decider,
} as unknown as Readonly<Record<string, Decider<unknown, unknown, unknown, unknown>>>

/** A stream as folded so far from the log. */
export interface FoldedStream {
  readonly category: string
  readonly partnerId: string
  version: bigint
  state: unknown
}

// Collects the row of each stream's final state; a state without a row (a deleted endpoint) adds none.
/** The read-model rows of the streams' final states (transaction rows are collected while folding). */
export const finalRows = (streams: ReadonlyMap<string, FoldedStream>) => {
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

/** The categories whose streams have read models: the only payloads a fold reads. */
export const projectedCategories = Object.keys(deciders)

/**
 * Folds a batch of the log into the streams' states, and collects the transaction row of every movement.
 * Streams of other categories are only counted. Dies on a stream read out of order: a corrupt log.
 */
export const foldRows = (
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

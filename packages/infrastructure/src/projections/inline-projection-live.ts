import { SqlClient } from "@effect/sql"
import type { ClientCredential, Ledger, Order, Partner, User, WebhookEndpoint } from "@points/domain"
import { Effect, Layer } from "effect"
import { InlineProjection, type StreamChange } from "../event-store/inline-projection.js"
import { categoryOf, type StreamId } from "../event-store/stream-id.js"
import { credentialRowOf, upsertCredentials } from "./credentials.js"
import { orderRowOf, upsertOrders } from "./orders.js"
import { partnerRowOf, upsertPartners } from "./partners.js"
import { pointsAccountRowOf, pointsAccountsUpsert, upsertPointsAccounts } from "./points-accounts.js"
import { ledgerPublicEventRows, writeWithPublicEvents } from "./public-event-rows.js"
import { insertPublicEvents, publicEventsInsert } from "./public-events.js"
import { insertTransactionsAfter, isMovement, transactionRowOf } from "./transactions.js"
import { upsertUsers, userRowOf } from "./users.js"
import { deleteWebhookEndpoint, upsertWebhookEndpoints, webhookEndpointRowOf } from "./webhook-endpoints.js"

// Rows come from the aggregate's state after the events (not from replaying each event against the row), so
// what the unit of work writes here is exactly what a rebuild folding the whole stream writes.

const writeRow = <Row, E, R>(
  row: Row | null,
  write: (rows: ReadonlyArray<Row>) => Effect.Effect<unknown, E, R>,
): Effect.Effect<void, E, R> => (row === null ? Effect.void : Effect.asVoid(write([row])))

// The account row, its new transactions and their public events go in one statement (one round trip while
// the account's stream is locked). The user's row names the account from the user's own state.
const projectLedger = (change: StreamChange) =>
  Effect.gen(function* () {
    const account = pointsAccountRowOf(change.partnerId, change.state as Ledger.LedgerState)
    const transactions = []
    for (const recorded of change.events) {
      const event = recorded.event as Ledger.LedgerEvent
      if (isMovement(event))
        transactions.push(transactionRowOf(change.partnerId, recorded.globalPosition, event))
    }
    const announced = ledgerPublicEventRows(change)
    if (transactions.length === 0) {
      yield* writeRow(account, upsertPointsAccounts)
      if (announced.length > 0) yield* insertPublicEvents(announced)
      return
    }
    yield* insertTransactionsAfter(
      [
        ...(account === null ? [] : [pointsAccountsUpsert([account])]),
        ...(announced.length === 0 ? [] : [publicEventsInsert(announced)]),
      ],
      transactions,
    )
  })

const projectWebhookEndpoint = (change: StreamChange) => {
  const state = change.state as WebhookEndpoint.WebhookEndpointState
  return state._tag === "Deleted"
    ? Effect.asVoid(deleteWebhookEndpoint(change.partnerId, state.endpointId))
    : writeRow(webhookEndpointRowOf(change.partnerId, state), upsertWebhookEndpoints)
}

/**
 * Writes the read models of one changed stream, chosen by the stream's category, and for users, points
 * accounts and orders the public events its events announce. Reference reservations (and any category
 * without a read model) write nothing.
 */
export const projectStreamChange = (change: StreamChange) => {
  const category: string = categoryOf(change.streamId as StreamId)
  switch (category) {
    case "user":
      return writeWithPublicEvents(
        "user",
        change,
        writeRow(userRowOf(change.partnerId, change.state as User.UserState), upsertUsers),
      )
    case "ledger":
      return projectLedger(change)
    case "order":
      return writeWithPublicEvents(
        "order",
        change,
        writeRow(orderRowOf(change.partnerId, change.state as Order.OrderState), upsertOrders),
      )
    case "webhook":
      return projectWebhookEndpoint(change)
    case "credential":
      return writeRow(
        credentialRowOf(change.partnerId, change.state as ClientCredential.CredentialState),
        upsertCredentials,
      )
    case "partner":
      return writeRow(partnerRowOf(change.state as Partner.PartnerState), upsertPartners)
    default:
      return Effect.void
  }
}

/**
 * The read models the API serves, and the public events, written inside the unit of work that appends the
 * events: a GET right after a POST sees its outcome, and every announced change has its public event. A second add, subtract or order with a partner's reference id fails the unit with
 * DuplicateReferenceId (LE0006), from the database's unique indexes.
 */
export const InlineProjectionLive: Layer.Layer<InlineProjection, never, SqlClient.SqlClient> = Layer.effect(
  InlineProjection,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    apply: (change: StreamChange) =>
      projectStreamChange(change).pipe(Effect.provideService(SqlClient.SqlClient, sql)),
  })),
)

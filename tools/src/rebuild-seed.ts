import { SqlClient } from "@effect/sql"
import {
  AccountId,
  Email,
  type EventCatalog,
  Ledger,
  Order,
  OrderId,
  Partner,
  PartnerId,
  PartnerUserId,
  Points,
  PointsBalance,
  Reference,
  ReferenceId,
  Sku,
  TransactionId,
  User,
  UserId,
} from "@points/domain"
import { categoryOf, type StreamId, streamId } from "@points/infrastructure"
import { DateTime, Effect } from "effect"

// What one seeded user does, the way the API would record it: registered and activated, points added and
// subtracted (each reserving its reference id), orders placed (each debited and reserving its reference id),
// most of them fulfilled, one cancelled and refunded.
const ADDS = 30
const SUBTRACTS = 10
const COMPLETED_ORDERS = 5
const CANCELLED_ORDERS = 1

/** Events one seeded user adds to the log, over all their streams. */
export const EVENTS_PER_USER =
  2 + // user: registered, activated
  1 +
  ADDS +
  SUBTRACTS +
  COMPLETED_ORDERS +
  2 * CANCELLED_ORDERS + // ledger: opened, movements, refunds
  ADDS +
  SUBTRACTS +
  COMPLETED_ORDERS +
  CANCELLED_ORDERS + // reference reservations
  3 * COMPLETED_ORDERS +
  2 * CANCELLED_ORDERS // orders: placed, processing, completed / placed, cancelled

/** One line per seeded stream kind, to print beside the figure. */
export const seedMix = `per user: 2 user, ${1 + ADDS + SUBTRACTS + COMPLETED_ORDERS + 2 * CANCELLED_ORDERS} ledger, ${
  ADDS + SUBTRACTS + COMPLETED_ORDERS + CANCELLED_ORDERS
} reference, ${3 * COMPLETED_ORDERS + 2 * CANCELLED_ORDERS} order events (${EVENTS_PER_USER} in all)`

// Every value is built with validation off (the `true` passed to each make): the catalogs' encode validates
// each event once on its way to the store, and seeding speed is not what is measured.

// Deterministic UUID v7-shaped ids from a counter: every run seeds the same log.
let counter = 0
const nextId = () => `01936b2e-0000-7000-8000-${(++counter).toString(16).padStart(12, "0")}`

interface SeedStream {
  readonly streamId: StreamId
  readonly partnerId: string
  readonly events: ReadonlyArray<unknown>
  readonly catalog: EventCatalog<unknown>
}

const stream = <E>(id: StreamId, partnerId: string, events: ReadonlyArray<E>, catalog: EventCatalog<E>) =>
  ({ streamId: id, partnerId, events, catalog: catalog as EventCatalog<unknown> }) satisfies SeedStream

/** A partner's stream. */
export const partnerStreams = (partnerId: PartnerId, at: DateTime.Utc): ReadonlyArray<SeedStream> => [
  stream(
    streamId("partner", partnerId),
    partnerId,
    [Partner.PartnerRegistered.make({ partnerId, name: `Partner ${partnerId.slice(-4)}`, at }, true)],
    Partner.partnerEvents,
  ),
]

/** Every stream one user's history writes, each with all its events, every balance consistent. */
export const userStreams = (partnerId: PartnerId, start: DateTime.Utc): ReadonlyArray<SeedStream> => {
  const userId = UserId.make(nextId(), true)
  const accountId = AccountId.make(nextId(), true)
  let clock = 0
  const tick = () => DateTime.add(start, { seconds: clock++ })
  const streams: Array<SeedStream> = []
  const user = [
    User.UserRegistered.make(
      {
        userId,
        partnerId,
        partnerUserId: PartnerUserId.make(`crm-${userId.slice(-8)}`),
        email: Email.make(`${userId.slice(-8)}@example.com`),
        name: "Seeded User",
        at: tick(),
      },
      true,
    ),
    User.UserActivated.make({ userId, at: tick() }, true),
  ]
  streams.push(stream(streamId("user", userId), partnerId, user, User.userEvents))
  const ledger: Array<Ledger.LedgerEvent> = [
    Ledger.AccountOpened.make({ accountId, userId, at: tick() }, true),
  ]
  let balance = 0
  const reserve = (
    kind: "transaction" | "order",
    referenceId: ReferenceId,
    recordId: TransactionId | OrderId,
  ) =>
    streams.push(
      stream(
        streamId("reference", `${partnerId}:${kind}:${referenceId}`),
        partnerId,
        [
          Reference.ReferenceReserved.make(
            {
              partnerId,
              kind,
              referenceId,
              recordId,
              at: tick(),
            },
            true,
          ),
        ],
        Reference.referenceEvents,
      ),
    )
  const move = (kind: "add" | "subtract", amount: number) => {
    const transactionId = TransactionId.make(nextId(), true)
    const referenceId = ReferenceId.make(`${kind}-${transactionId.slice(-12)}`, true)
    balance += kind === "add" ? amount : -amount
    const movement = {
      transactionId,
      accountId,
      userId,
      amount: Points.make(amount, true),
      balanceAfter: PointsBalance.make(balance, true),
      referenceId,
      description: kind === "add" ? "purchase bonus" : null,
      at: tick(),
    }
    ledger.push(
      kind === "add" ? Ledger.PointsAdded.make(movement, true) : Ledger.PointsSubtracted.make(movement, true),
    )
    reserve("transaction", referenceId, transactionId)
  }
  const order = (outcome: "completed" | "cancelled") => {
    const orderId = OrderId.make(nextId(), true)
    const referenceId = ReferenceId.make(`order-${orderId.slice(-12)}`, true)
    const debitTransactionId = TransactionId.make(nextId(), true)
    const items = [
      { sku: Sku.make("BOOK", true), name: "A book", quantity: 1, points: Points.make(120, true) },
      { sku: Sku.make("PEN", true), name: null, quantity: 3, points: Points.make(10, true) },
    ]
    const totalPoints = Points.make(150, true)
    const placedAt = tick()
    balance -= totalPoints
    ledger.push(
      Ledger.OrderDebited.make(
        {
          transactionId: debitTransactionId,
          accountId,
          userId,
          orderId,
          amount: totalPoints,
          balanceAfter: PointsBalance.make(balance),
          referenceId,
          at: placedAt,
        },
        true,
      ),
    )
    reserve("order", referenceId, orderId)
    const events: Array<Order.OrderEvent> = [
      Order.OrderPlaced.make(
        {
          orderId,
          userId,
          referenceId,
          items,
          totalPoints,
          debitTransactionId,
          at: placedAt,
        },
        true,
      ),
    ]
    if (outcome === "completed") {
      events.push(Order.OrderProcessingStarted.make({ orderId, at: tick() }, true))
      events.push(Order.OrderCompleted.make({ orderId, at: tick() }, true))
    } else {
      const at = tick()
      events.push(Order.OrderCancelled.make({ orderId, at }, true))
      balance += totalPoints
      ledger.push(
        Ledger.OrderRefunded.make(
          {
            transactionId: TransactionId.make(nextId()),
            accountId,
            userId,
            orderId,
            amount: totalPoints,
            balanceAfter: PointsBalance.make(balance),
            referenceId,
            at,
          },
          true,
        ),
      )
    }
    streams.push(stream(streamId("order", orderId), partnerId, events, Order.orderEvents))
  }
  for (let n = 0; n < ADDS; n++) move("add", 100 + n)
  for (let n = 0; n < SUBTRACTS; n++) move("subtract", 20 + n)
  for (let n = 0; n < COMPLETED_ORDERS; n++) order("completed")
  for (let n = 0; n < CANCELLED_ORDERS; n++) order("cancelled")
  streams.push(stream(streamId("ledger", userId), partnerId, ledger, Ledger.ledgerEvents))
  return streams
}

/** A fresh partner id for seeding. */
export const seedPartnerId = () => PartnerId.make(nextId(), true)

/**
 * Appends whole streams in bulk, in one transaction and two statements (streams, then every event), with the
 * columns and encodings appendToStream uses. Only for seeding an empty log: it checks no expected version.
 */
export const appendStreamsInBulk = (streams: ReadonlyArray<SeedStream>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const events = streams.flatMap((s) =>
      s.events.map((event, index) => ({ stream: s, version: index + 1, stored: s.catalog.encode(event) })),
    )
    const occurredAt = new Date().toISOString()
    yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql.unsafe(
          `INSERT INTO streams (stream_id, category, partner_id, version)
           SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::bigint[])`,
          [
            streams.map((s) => s.streamId),
            streams.map((s) => categoryOf(s.streamId)),
            streams.map((s) => s.partnerId),
            streams.map((s) => s.events.length),
          ],
        )
        yield* sql.unsafe(
          `INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, partner_id,
                               occurred_at)
           SELECT s, v, id, t, sv, d, p, $8::timestamptz
           FROM unnest($1::text[], $2::bigint[], $3::uuid[], $4::text[], $5::int[], $6::jsonb[], $7::uuid[])
             AS e(s, v, id, t, sv, d, p)`,
          [
            events.map((e) => e.stream.streamId),
            events.map((e) => e.version),
            events.map(() => nextId()),
            events.map((e) => e.stored.type),
            events.map((e) => e.stored.version),
            events.map((e) => JSON.stringify(e.stored.data)),
            events.map((e) => e.stream.partnerId),
            occurredAt,
          ],
        )
      }),
    )
    return events.length
  })

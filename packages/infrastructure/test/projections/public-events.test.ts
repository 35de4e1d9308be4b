import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import {
  Order,
  type OrderId,
  OrderResource,
  type PartnerId,
  ResourceNotFound,
  TransactionResource,
  User,
  type UserId,
  UserResource,
} from "@points/domain"
import { Effect, Schema, TestClock } from "effect"
import {
  decideAndAppend,
  getOrder,
  getPublicEvent,
  getTransaction,
  getUser,
  listPublicEvents,
  orderStream,
  publicEventOf,
  rebuildReadModels,
  userStream,
} from "../../src/index.js"
import { contextFor } from "../fixtures.js"
import {
  activateUser,
  activeUser,
  addPoints,
  cancelOrder,
  closeUser,
  completeOrder,
  failOrder,
  item,
  placeOrder,
  projectionDatabase,
  registerPartner,
  registerUser,
  startProcessing,
  subtractPoints,
  updateUser,
} from "./commands.js"

interface StoredRow {
  readonly id: string
  readonly partner_id: string
  readonly type: string
  readonly occurred_at: Date
  readonly data: unknown
  readonly global_position: string
}

/** Every public event of the partner, in log order. */
const publicEvents = (partnerId: PartnerId) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<StoredRow>`SELECT * FROM public_events WHERE partner_id = ${partnerId} ORDER BY global_position`,
  )

/** Runs `write` and answers the public events it wrote, as their objects. */
const announcedBy = <A, E, R>(partnerId: PartnerId, write: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const before = (yield* publicEvents(partnerId)).length
    const value = yield* write
    const rows = (yield* publicEvents(partnerId)).slice(before)
    return { value, events: rows.map(publicEventOf) }
  })

const schemaOf = (type: string): Schema.Schema<unknown> =>
  (type.startsWith("user.")
    ? UserResource
    : type.startsWith("points.")
      ? TransactionResource
      : OrderResource) as unknown as Schema.Schema<unknown>

/** The only event `write` announced; it must be of `type` and carry exactly what `read` answers now. */
const expectAnnounced = <A, E, R, B, E2, R2>(
  partnerId: PartnerId,
  write: Effect.Effect<A, E, R>,
  type: string,
  read: (value: A) => Effect.Effect<B, E2, R2>,
) =>
  Effect.gen(function* () {
    const { value, events } = yield* announcedBy(partnerId, write)
    expect(events.map((event) => event.type)).toEqual([type])
    const now = yield* read(value)
    // Byte for byte: the JSON text the GET answers (its resource encoded by the contract's schema).
    expect(JSON.stringify(events[0]?.data)).toBe(JSON.stringify(Schema.encodeSync(schemaOf(type))(now)))
    return { value, event: events[0], resource: now }
  })

layer(projectionDatabase())("public events", (it) => {
  it.effect(
    "each of the 7 types is written inline with the resource as its GET answered, with its version",
    () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        const userOf = (userId: UserId) => getUser(partnerId, userId)
        const created = yield* expectAnnounced(partnerId, registerUser(partnerId), "user.created", userOf)
        const userId = created.value
        expect(created.resource).toMatchObject({ status: "processing", version: 1 })
        yield* TestClock.adjust("1 second")
        const activated = yield* expectAnnounced(
          partnerId,
          Effect.as(activateUser(partnerId, userId), userId),
          "user.activated",
          userOf,
        )
        expect(activated.resource).toMatchObject({ status: "active", version: 2 })

        const quiet = yield* announcedBy(partnerId, updateUser(partnerId, userId, "new@example.com", "Ada L"))
        expect(quiet.events).toEqual([])

        const added = yield* expectAnnounced(
          partnerId,
          addPoints(partnerId, userId, 500),
          "points.added",
          (id) => getTransaction(partnerId, id),
        )
        expect(added.resource).toMatchObject({ type: "add", amount: 500, balance_after: 500, version: 1 })
        const subtracted = yield* expectAnnounced(
          partnerId,
          subtractPoints(partnerId, userId, 100),
          "points.subtracted",
          (id) => getTransaction(partnerId, id),
        )
        expect(subtracted.resource).toMatchObject({ type: "subtract", balance_after: 400 })

        // Orders: the debit and the refunds are reported by the order's events, never as points.*.
        const orderOf = (orderId: OrderId) => getOrder(partnerId, orderId)
        const placed = yield* expectAnnounced(
          partnerId,
          placeOrder(partnerId, userId, [item("BOOK", 2, 50)]),
          "order.created",
          orderOf,
        )
        expect(placed.resource).toMatchObject({ status: "pending", total_points: 100, version: 1 })
        const orderId = placed.value
        yield* TestClock.adjust("1 second")
        const processing = yield* expectAnnounced(
          partnerId,
          Effect.as(startProcessing(partnerId, orderId), orderId),
          "order.status_changed",
          orderOf,
        )
        expect(processing.resource).toMatchObject({ status: "processing", version: 2 })
        const completed = yield* expectAnnounced(
          partnerId,
          Effect.as(completeOrder(partnerId, orderId), orderId),
          "order.status_changed",
          orderOf,
        )
        expect(completed.resource).toMatchObject({ status: "completed", version: 3 })

        const toCancel = yield* placeOrder(partnerId, userId, [item("MUG", 1, 30)])
        const cancelled = yield* expectAnnounced(
          partnerId,
          Effect.as(cancelOrder(partnerId, userId, toCancel), toCancel),
          "order.status_changed",
          orderOf,
        )
        expect(cancelled.resource).toMatchObject({ status: "cancelled", version: 2 })

        const toFail = yield* placeOrder(partnerId, userId, [item("FAIL-1", 1, 20)])
        yield* startProcessing(partnerId, toFail)
        const failed = yield* expectAnnounced(
          partnerId,
          Effect.as(failOrder(partnerId, userId, toFail, "out of stock"), toFail),
          "order.status_changed",
          orderOf,
        )
        expect(failed.resource).toMatchObject({
          status: "failed",
          failure_reason: "out of stock",
          version: 3,
        })

        const closed = yield* expectAnnounced(
          partnerId,
          Effect.as(closeUser(partnerId, userId), userId),
          "user.closed",
          userOf,
        )
        // Registered, activated, details changed, account linked (no public event of its own), closed.
        expect(closed.resource).toMatchObject({ status: "closed", email: "new@example.com", version: 5 })
        expect((closed.resource as { points_account_id: string | null }).points_account_id).not.toBeNull()

        // The rows: the domain event's id, the partner, when it happened, its place in the log.
        const rows = yield* publicEvents(partnerId)
        const sql = yield* SqlClient.SqlClient
        const logged = yield* sql<{ event_id: string; global_position: string }>`
        SELECT event_id, global_position::text AS global_position FROM events WHERE partner_id = ${partnerId}`
        const positionOf = new Map(logged.map((row) => [row.event_id, row.global_position]))
        for (const row of rows) expect(positionOf.get(row.id)).toBe(row.global_position)
        expect(rows.map((row) => row.type)).toEqual([
          "user.created",
          "user.activated",
          "points.added",
          "points.subtracted",
          "order.created",
          "order.status_changed",
          "order.status_changed",
          "order.created",
          "order.status_changed",
          "order.created",
          "order.status_changed",
          "order.status_changed",
          "user.closed",
        ])
        expect(publicEventOf(rows[1] as StoredRow).timestamp).toBe(
          (rows[1] as StoredRow).occurred_at.toISOString(),
        )
      }),
  )

  it.effect("two announced events on one stream in one unit each carry the state right after them", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const userId = yield* activeUser(partnerId)
      yield* addPoints(partnerId, userId, 100)
      const orderId = yield* placeOrder(partnerId, userId, [item("A", 1, 10)])
      yield* TestClock.adjust("1 second")
      const { events } = yield* announcedBy(
        partnerId,
        decideAndAppend(
          { order: orderStream(orderId) },
          (s) =>
            Effect.gen(function* () {
              const started = yield* Order.decide(Order.StartProcessing.make({ orderId }), s.order)
              const state = started.reduce(Order.evolve, s.order)
              const done = yield* Order.decide(Order.CompleteOrder.make({ orderId }), state)
              return { order: [...started, ...done] }
            }),
          contextFor(partnerId),
        ),
      )
      expect(
        events.map((event) => [event.type, (event.data as { status: string }).status, event.data.version]),
      ).toEqual([
        ["order.status_changed", "processing", 2],
        ["order.status_changed", "completed", 3],
      ])
      expect(events[1]?.data).toEqual(yield* getOrder(partnerId, orderId))
      const startedOrder = events[0]?.data as { status_history: ReadonlyArray<unknown> } | undefined
      expect(startedOrder?.status_history).toHaveLength(2)

      // A user registered and activated in one unit: created as processing, then activated.
      const user = yield* announcedBy(
        partnerId,
        decideAndAppend(
          { user: userStream("01936b2e-0000-7000-8000-00000000aa01") },
          (s) =>
            Effect.gen(function* () {
              const command = User.RegisterUser.make({
                userId: "01936b2e-0000-7000-8000-00000000aa01" as UserId,
                partnerId,
                partnerUserId: "both" as User.RegisterUser["partnerUserId"],
                email: "both@example.com" as User.RegisterUser["email"],
                name: null,
              })
              const registered = yield* User.decide(command, s.user)
              const state = registered.reduce(User.evolve, s.user)
              const activated = yield* User.decide(User.ActivateUser.make({ userId: command.userId }), state)
              return { user: [...registered, ...activated] }
            }),
          contextFor(partnerId),
        ),
      )
      expect(
        user.events.map((event) => [
          event.type,
          (event.data as { status: string }).status,
          event.data.version,
        ]),
      ).toEqual([
        ["user.created", "processing", 1],
        ["user.activated", "active", 2],
      ])
    }),
  )

  it.effect("the events API reads: one event, another partner's is LE0002, lists filter and page", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const other = yield* registerPartner("Globex")
      const userId = yield* activeUser(partnerId)
      yield* TestClock.adjust("1 minute")
      const cut = new Date(Number(yield* TestClock.currentTimeMillis))
      for (const amount of [1, 2, 3]) yield* addPoints(partnerId, userId, amount)
      const rows = yield* publicEvents(partnerId)
      const first = rows[0] as StoredRow
      expect(yield* getPublicEvent(partnerId, first.id)).toEqual(publicEventOf(first))
      const foreign = yield* Effect.flip(getPublicEvent(other, first.id))
      expect(foreign).toEqual(new ResourceNotFound({ resource: "event", id: first.id }))
      expect(yield* Effect.flip(getPublicEvent(partnerId, "not-an-id"))).toBeInstanceOf(ResourceNotFound)

      const all = yield* listPublicEvents(partnerId, {})
      expect(all.data.map((event) => event.type)).toEqual([
        "user.created",
        "user.activated",
        "points.added",
        "points.added",
        "points.added",
      ])
      expect((yield* listPublicEvents(other, {})).data).toEqual([])
      const added = yield* listPublicEvents(partnerId, { type: "points.added" })
      expect(added.data.map((event) => (event.data as { amount: number }).amount)).toEqual([1, 2, 3])
      const since = yield* listPublicEvents(partnerId, { since: cut })
      expect(since.data.map((event) => event.type)).toEqual(["points.added", "points.added", "points.added"])
      const page1 = yield* listPublicEvents(partnerId, { limit: 2 })
      expect(page1.data).toHaveLength(2)
      const page2 = yield* listPublicEvents(partnerId, { limit: 2, cursor: page1.next_cursor ?? "" })
      const page3 = yield* listPublicEvents(partnerId, { limit: 2, cursor: page2.next_cursor ?? "" })
      expect(page3.next_cursor).toBeNull()
      expect([...page1.data, ...page2.data, ...page3.data]).toEqual(all.data)
    }),
  )

  it.effect("a rebuild of the read models leaves the public events untouched", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const userId = yield* activeUser(partnerId)
      yield* addPoints(partnerId, userId, 10)
      const orderId = yield* placeOrder(partnerId, userId, [item("A", 1, 5)])
      yield* cancelOrder(partnerId, userId, orderId)
      const sql = yield* SqlClient.SqlClient
      const all = sql`SELECT * FROM public_events ORDER BY global_position`
      const before = yield* all
      expect(before.length).toBeGreaterThanOrEqual(5)
      yield* rebuildReadModels()
      expect(yield* all).toEqual(before)
    }),
  )
})

import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { activeUser, call, eventually, newPartner, type Reply, testServer } from "./harness.js"

const expectInvalid = (reply: Reply, field: string) => {
  expect(reply.status).toBe(400)
  expect(reply.body.errors[0].code).toBe("GH1006")
  expect(reply.body.errors[0].message).toContain(field)
}

layer(testServer(), { timeout: "120 seconds", excludeTestServices: true })("The events API", (it) => {
  it.effect(
    "lists every announced change, oldest first, each carrying byte for byte what its GET answered",
    () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const userId = yield* activeUser(token)
        const user = yield* call("GET", `/api/users/${userId}`, { token })
        const movement = (kind: string, amount: number) =>
          call("POST", `/api/points/${kind}`, {
            token,
            json: { transaction: { user_id: userId, amount, reference_id: `${kind}-${amount}` } },
          })
        const added = yield* movement("add", 100)
        const subtracted = yield* movement("subtract", 30)
        const placed = yield* call("POST", "/api/orders", {
          token,
          headers: { "idempotency-key": `order-${userId}` },
          json: {
            user_id: userId,
            reference_id: "cart-1",
            items: [{ sku: "BOOK", quantity: 2, points: 10 }],
          },
        })
        expect(placed.status).toBe(201)
        const cancelled = yield* call("POST", `/api/orders/${placed.body.id}/cancel`, { token })
        expect(cancelled.status).toBe(200)

        const listed = yield* call("GET", "/api/events?limit=100", { token })
        expect(listed.status).toBe(200)
        expect(listed.body.next_cursor).toBeNull()
        const events = listed.body.data as ReadonlyArray<{
          id: string
          type: string
          timestamp: string
          data: object
        }>
        expect(events.map((event) => event.type)).toEqual([
          "user.created",
          "user.activated",
          "points.added",
          "points.subtracted",
          "order.created",
          "order.status_changed",
        ])
        // The order debit and refund are no points.* events: the order's own events report them.
        const text = (index: number) => JSON.stringify(events[index]?.data)
        expect(text(1)).toBe(user.text)
        expect(text(2)).toBe(added.text)
        expect(text(3)).toBe(subtracted.text)
        expect(text(4)).toBe(placed.text)
        expect(text(5)).toBe(cancelled.text)
        expect(events[0]?.data).toMatchObject({ id: userId, status: "processing", version: 1 })
        for (const event of events) {
          expect(Object.keys(event)).toEqual(["id", "type", "timestamp", "data"])
          expect(event.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
          const one = yield* call("GET", `/api/events/${event.id}`, { token })
          expect(one.status).toBe(200)
          expect(one.body).toEqual(event)
        }
      }),
  )

  it.effect(
    "filters by type and since, pages with a cursor, and refuses bad parameters with 400 GH1006",
    () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const userId = yield* activeUser(token)
        // A cut just after the activation (event timestamps have millisecond precision), passed before adding.
        const before = yield* call("GET", "/api/events", { token })
        const cut = new Date(Date.parse(before.body.data[1].timestamp) + 1).toISOString()
        yield* eventually(
          Effect.sync(() => Date.now()),
          (now) => now > Date.parse(cut),
        )
        for (const amount of [1, 2, 3]) {
          yield* call("POST", "/api/points/add", {
            token,
            json: { transaction: { user_id: userId, amount, reference_id: `r-${amount}` } },
          })
        }
        const added = yield* call("GET", "/api/events?type=points.added", { token })
        expect(added.body.data.map((event: { data: { amount: number } }) => event.data.amount)).toEqual([
          1, 2, 3,
        ])
        const since = yield* call("GET", `/api/events?since=${encodeURIComponent(cut)}`, { token })
        expect(since.body.data.map((event: { type: string }) => event.type)).toEqual([
          "points.added",
          "points.added",
          "points.added",
        ])
        // A bound finer than a millisecond is not cut to one: an event at .958 is before .9581.
        const activated: string = before.body.data[1].timestamp
        const at = yield* call("GET", `/api/events?since=${encodeURIComponent(activated)}`, { token })
        expect(at.body.data[0].type).toBe("user.activated")
        const finer = `${activated.slice(0, -1)}1Z`
        const after = yield* call("GET", `/api/events?since=${encodeURIComponent(finer)}`, { token })
        expect(after.body.data.map((event: { type: string }) => event.type)).not.toContain("user.activated")
        const all = yield* call("GET", "/api/events", { token })
        expect(all.body.data).toHaveLength(5)
        const first = yield* call("GET", "/api/events?limit=3", { token })
        expect(first.body.data).toHaveLength(3)
        const rest = yield* call("GET", `/api/events?limit=3&cursor=${first.body.next_cursor}`, { token })
        expect(rest.body.next_cursor).toBeNull()
        expect([...first.body.data, ...rest.body.data]).toEqual(all.body.data)

        expectInvalid(yield* call("GET", "/api/events?type=user.updated", { token }), "type")
        expectInvalid(yield* call("GET", "/api/events?since=yesterday", { token }), "since")
        expectInvalid(yield* call("GET", "/api/events?since=2025-01-01", { token }), "since")
        expectInvalid(yield* call("GET", "/api/events?limit=0", { token }), "limit")
        expectInvalid(yield* call("GET", "/api/events?limit=101", { token }), "limit")
        expectInvalid(yield* call("GET", "/api/events?cursor=bogus", { token }), "cursor")
      }),
  )

  it.effect("another partner's event is 404 LE0002, as is an id that is none", () =>
    Effect.gen(function* () {
      const acme = yield* newPartner("Acme")
      const globex = yield* newPartner("Globex")
      yield* activeUser(acme.token)
      const listed = yield* call("GET", "/api/events", { token: acme.token })
      const eventId = listed.body.data[0].id
      for (const id of [eventId, "not-an-id", "01936b2e-0000-7000-8000-000000000000"]) {
        const reply = yield* call("GET", `/api/events/${id}`, { token: globex.token })
        expect(reply.status).toBe(404)
        expect(reply.body.errors[0].code).toBe("LE0002")
      }
      expect((yield* call("GET", "/api/events", { token: globex.token })).body.data).toEqual([])
      expect((yield* call("GET", "/api/events")).status).toBe(401)
    }),
  )
})

import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { activeUser, call, newPartner, testServer } from "./harness.js"

const upper = (id: string) => id.toUpperCase()

layer(testServer(), { timeout: "120 seconds", excludeTestServices: true })("Ids and cursors", (it) => {
  it.effect(
    "an id written in upper or mixed case names the same resource everywhere a client sends one",
    () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const userId = yield* activeUser(token)
        expect(userId).toBe(userId.toLowerCase())

        const user = yield* call("GET", `/api/users/${upper(userId)}`, { token })
        expect(user.status).toBe(200)
        expect(user.body.id).toBe(userId)

        const added = yield* call("POST", "/api/points/add", {
          token,
          json: { transaction: { user_id: upper(userId), amount: 5, reference_id: "upper-1" } },
        })
        expect(added.status).toBe(201)
        expect(added.body.user_id).toBe(userId)
        const mixed = `${upper(userId.slice(0, 8))}${userId.slice(8)}`
        const account = yield* call("GET", `/api/users/${mixed}/points-account`, { token })
        expect(account.body).toMatchObject({ id: added.body.account_id, balance: 5 })
        const transaction = yield* call("GET", `/api/points/transactions/${upper(added.body.id)}`, { token })
        expect(transaction.body).toEqual(added.body)
        const filtered = yield* call("GET", `/api/points/transactions?user_id=${upper(userId)}`, { token })
        expect(filtered.body.data).toEqual([added.body])

        const order = yield* call("POST", "/api/orders", {
          token,
          headers: { "idempotency-key": `order-${userId}` },
          json: {
            user_id: upper(userId),
            reference_id: "cart-1",
            items: [{ sku: "MUG", quantity: 1, points: 2 }],
          },
        })
        expect(order.status).toBe(201)
        expect(order.body.user_id).toBe(userId)
        const orders = yield* call("GET", `/api/orders?user_id=${upper(userId)}`, { token })
        expect(orders.body.data.map((found: { id: string }) => found.id)).toEqual([order.body.id])
        const cancelKey = { "idempotency-key": `cancel-${userId}` }
        const cancelled = yield* call("POST", `/api/orders/${upper(order.body.id)}/cancel`, {
          token,
          headers: cancelKey,
        })
        expect(cancelled.status).toBe(200)
        // The same request under the same key, its id written another way: replayed, not "path differs".
        const orderId: string = order.body.id
        for (const written of [orderId, `%${orderId.charCodeAt(0).toString(16)}${orderId.slice(1)}`]) {
          const again = yield* call("POST", `/api/orders/${written}/cancel`, { token, headers: cancelKey })
          expect(again.status, again.text).toBe(200)
          expect(again.headers.get("idempotent-replayed")).toBe("true")
          expect(again.body).toEqual(cancelled.body)
        }

        const events = yield* call("GET", "/api/events?limit=1", { token })
        const eventId: string = events.body.data[0].id
        expect((yield* call("GET", `/api/events/${upper(eventId)}`, { token })).body).toEqual(
          events.body.data[0],
        )

        const endpoint = yield* call("POST", "/api/webhooks/endpoints", {
          token,
          json: { url: "https://hooks.example.com/in" },
        })
        const path = `/api/webhooks/endpoints/${upper(endpoint.body.id)}`
        expect((yield* call("GET", path, { token })).body.id).toBe(endpoint.body.id)
        const replayed = yield* call("POST", `${path}/replay`, {
          token,
          headers: { "idempotency-key": `replay-${userId}` },
          json: { event_ids: [upper(eventId)] },
        })
        expect(replayed.status).toBe(202)
        expect(replayed.body).toEqual({ replayed: 1 })

        // Another partner's id stays unknown in any case, as does what is no UUID.
        const other = yield* newPartner("Other")
        const theirs = yield* call("GET", `/api/users/${upper(userId)}`, { token: other.token })
        expect(theirs.status).toBe(404)
        expect(theirs.body.errors[0].code).toBe("LE0002")
        const unknown = yield* call("GET", "/api/users/NOT-A-UUID", { token })
        expect(unknown.status).toBe(404)
        expect(unknown.body.errors[0].code).toBe("LE0002")
      }),
  )

  it.effect(
    "a cursor belongs to its list: another list's is 400 GH1006, reported with the other problems",
    () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        for (let n = 0; n < 3; n++) yield* activeUser(token)
        const users = yield* call("GET", "/api/users?limit=1", { token })
        const cursor: string = users.body.next_cursor
        expect(cursor).toEqual(expect.any(String))
        expect((yield* call("GET", `/api/users?limit=5&cursor=${cursor}`, { token })).body.data).toHaveLength(
          2,
        )

        for (const list of [
          "/api/orders",
          "/api/points/transactions",
          "/api/events",
          "/api/webhooks/endpoints",
        ]) {
          const refused = yield* call("GET", `${list}?cursor=${cursor}`, { token })
          expect(refused.status, list).toBe(400)
          expect(
            refused.body.errors.map((error: { code: string; message: string }) => error.message),
          ).toEqual(["cursor is not a valid cursor"])
        }
        // Checked with the query, not after it: both problems in one answer.
        const both = yield* call("GET", "/api/orders?status=bogus&cursor=bogus", { token })
        expect(both.status).toBe(400)
        expect(both.body.errors.map((error: { message: string }) => error.message)).toEqual([
          expect.stringContaining("status"),
          "cursor is not a valid cursor",
        ])
      }),
  )
})

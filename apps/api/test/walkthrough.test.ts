import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { activeUser, call, eventually, newPartner, testServer } from "./harness.js"

layer(testServer(), { timeout: "120 seconds", excludeTestServices: true })(
  "A partner's integration, end to end",
  (it) => {
    it.effect("creates a user (processing, then active), adds points, and replays the add by its key", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const created = yield* call("POST", "/api/users", {
          token,
          json: { partner_user_id: "p-42", email: "ada@example.com" },
        })
        expect(created.status).toBe(201)
        expect(created.body).toMatchObject({ partner_user_id: "p-42", status: "processing", name: null })
        const early = yield* call("POST", "/api/points/add", {
          token,
          json: { transaction: { user_id: created.body.id, amount: 10, reference_id: "early" } },
        })
        // Unless the consumer was faster than this request, the user is still being processed.
        if (early.status !== 201) expect(early.body.errors[0].code).toBe("LE0001")
        const active = yield* eventually(
          call("GET", `/api/users/${created.body.id}`, { token }),
          (reply) => reply.body?.status === "active",
        )
        expect(active.status).toBe(200)

        const add = {
          transaction: {
            user_id: created.body.id,
            amount: 250,
            reference_id: "bonus-1",
            description: "welcome",
          },
        }
        const headers = { "idempotency-key": "add-bonus-1" }
        const first = yield* call("POST", "/api/points/add", { token, json: add, headers })
        expect(first.status).toBe(201)
        expect(first.body).toMatchObject({
          type: "add",
          amount: 250,
          reference_id: "bonus-1",
          description: "welcome",
        })
        const replay = yield* call("POST", "/api/points/add", { token, json: add, headers })
        expect(replay.status).toBe(201)
        expect(replay.text).toBe(first.text)
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        const quoted = yield* call("POST", "/api/points/add", {
          token,
          json: add,
          headers: { "idempotency-key": '"add-bonus-1"' },
        })
        expect(quoted.text).toBe(first.text)
        const other = yield* call("POST", "/api/points/add", {
          token,
          json: { transaction: { ...add.transaction, amount: 1 } },
          headers,
        })
        expect(other.status).toBe(422)
        expect(other.body.errors[0].code).toBe("IK1001")
        expect(other.body.errors[0].message).toContain("body")

        const account = yield* call("GET", `/api/users/${created.body.id}/points-account`, { token })
        expect(account.body.balance).toBe(first.body.balance_after)
        // The add that opened the account (this one, or the early one if it landed) changed the user too: it
        // names the account, one version later.
        const user = yield* call("GET", `/api/users/${created.body.id}`, { token })
        expect(user.body).toMatchObject({
          points_account_id: account.body.id,
          version: early.status === 201 ? active.body.version : active.body.version + 1,
          updated_at: account.body.created_at,
        })
        const transaction = yield* call("GET", `/api/points/transactions/${first.body.id}`, { token })
        expect(transaction.body).toEqual(first.body)
        const byReference = yield* call("GET", "/api/points/transactions?reference_id=bonus-1", { token })
        expect(byReference.body.data).toEqual([first.body])
      }),
    )

    it.effect("places an order (Idempotency-Key required), debits it, and refunds it on cancel", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const userId = yield* activeUser(token)
        yield* call("POST", "/api/points/add", {
          token,
          json: { transaction: { user_id: userId, amount: 100, reference_id: "seed" } },
        })
        const order = {
          user_id: userId,
          reference_id: "order-1",
          items: [{ sku: "MUG", quantity: 2, points: 30 }],
        }
        const withoutKey = yield* call("POST", "/api/orders", { token, json: order })
        expect(withoutKey.status).toBe(400)
        expect(withoutKey.body.errors[0].code).toBe("IK1003")
        const placed = yield* call("POST", "/api/orders", {
          token,
          json: order,
          headers: { "idempotency-key": "o-1" },
        })
        expect(placed.status).toBe(201)
        expect(placed.body).toMatchObject({ status: "pending", total_points: 60 })
        const afterDebit = yield* call("GET", `/api/users/${userId}/points-account`, { token })
        expect(afterDebit.body.balance).toBe(40)
        const tooMuch = yield* call("POST", "/api/orders", {
          token,
          json: { ...order, reference_id: "order-2", items: [{ sku: "TV", quantity: 1, points: 41 }] },
          headers: { "idempotency-key": "o-2" },
        })
        expect(tooMuch.status).toBe(422)
        expect(tooMuch.body.errors[0].code).toBe("LE2002")
        const cancelled = yield* call("POST", `/api/orders/${placed.body.id}/cancel`, { token })
        expect(cancelled.status).toBe(200)
        expect(cancelled.body.status).toBe("cancelled")
        const again = yield* call("POST", `/api/orders/${placed.body.id}/cancel`, { token })
        expect(again.status).toBe(409)
        expect(again.body.errors[0].code).toBe("LE3001")
        const refunded = yield* call("GET", `/api/users/${userId}/points-account`, { token })
        expect(refunded.body.balance).toBe(100)
      }),
    )

    it.effect("keeps partners apart: B gets 404 for A's user, and their reference ids never collide", () =>
      Effect.gen(function* () {
        const a = yield* newPartner("A")
        const b = yield* newPartner("B")
        const userOfA = yield* activeUser(a.token)
        const seen = yield* call("GET", `/api/users/${userOfA}`, { token: b.token })
        expect(seen.status).toBe(404)
        expect(seen.body.errors[0].code).toBe("LE0002")
        const userOfB = yield* activeUser(b.token)
        const addA = yield* call("POST", "/api/points/add", {
          token: a.token,
          json: { transaction: { user_id: userOfA, amount: 5, reference_id: "same" } },
          headers: { "idempotency-key": "same-key" },
        })
        const addB = yield* call("POST", "/api/points/add", {
          token: b.token,
          json: { transaction: { user_id: userOfB, amount: 7, reference_id: "same" } },
          headers: { "idempotency-key": "same-key" },
        })
        expect([addA.status, addB.status]).toEqual([201, 201])
        expect(addB.headers.get("idempotent-replayed")).toBeNull()
        const crossed = yield* call("POST", "/api/points/add", {
          token: b.token,
          json: { transaction: { user_id: userOfA, amount: 1, reference_id: "x" } },
        })
        expect(crossed.status).toBe(404)
      }),
    )
  },
)

import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import { expect, layer } from "@effect/vitest"
import { makePointsClient, verifyWebhook } from "@points/client"
import { ApiError } from "@points/http-api"
import { signWebhook } from "@points/infrastructure"
import { Effect, Layer } from "effect"
import { baseUrl, call, eventually, newPartner, testServer } from "./harness.js"

// Every request the client sends, as it sends it: the tokens it used.
const sentAuthorizations: Array<string | undefined> = []
const RecordingHttpClient = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(HttpClient.HttpClient, (client) =>
    HttpClient.tapRequest(client, (request) =>
      Effect.sync(() => sentAuthorizations.push(request.headers.authorization)),
    ),
  ),
).pipe(Layer.provide(FetchHttpClient.layer))

/** The client SDK of a new partner, against the test server. */
const partnerClient = Effect.gen(function* () {
  const { clientId, clientSecret, token } = yield* newPartner()
  const client = yield* makePointsClient({ baseUrl: yield* baseUrl, clientId, clientSecret }).pipe(
    Effect.provide(RecordingHttpClient),
  )
  return { client, token }
})

layer(testServer(), { timeout: "120 seconds", excludeTestServices: true })(
  "The client SDK against the API",
  (it) => {
    it.effect("runs a partner's integration: users, points, orders, exactly once per key", () =>
      Effect.gen(function* () {
        const { client } = yield* partnerClient
        const created = yield* client.createUser({ partner_user_id: "sdk-1", email: "ada@example.com" })
        const user = yield* eventually(client.getUser(created.id), (found) => found.status === "active")
        expect(user.partner_user_id).toBe("sdk-1")

        const add = { user_id: user.id, amount: 100, reference_id: "sdk-add" }
        const added = yield* client.addPoints(add, { idempotencyKey: "sdk-add-key" })
        const again = yield* client.addPoints(add, { idempotencyKey: "sdk-add-key" })
        expect(again).toEqual(added)
        const subtracted = yield* client.subtractPoints({
          user_id: user.id,
          amount: 30,
          reference_id: "sdk-sub",
        })
        expect(subtracted.balance_after).toBe(70)
        expect((yield* client.getPointsAccount(user.id)).balance).toBe(70)
        const byReference = yield* client.findTransactions({ reference_id: "sdk-add" })
        expect(byReference.data.map((transaction) => transaction.id)).toEqual([added.id])

        const order = yield* client.createOrder({
          user_id: user.id,
          reference_id: "sdk-order",
          items: [{ sku: "MUG", quantity: 2, points: 10 }],
        })
        expect(order.total_points).toBe(20)
        expect(
          (yield* client.findOrders({ reference_id: "sdk-order" })).data.map((found) => found.id),
        ).toEqual([order.id])
        const cancelled = yield* client.cancelOrder(order.id)
        expect(cancelled.status).toBe("cancelled")
        expect((yield* client.getPointsAccount(user.id)).balance).toBe(70)

        const missing = yield* Effect.flip(client.getOrder("no-such-order"))
        expect(missing).toBeInstanceOf(ApiError)
        expect(missing).toMatchObject({ status: 404, errors: [{ code: "LE0002" }] })
        expect(missing).toMatchObject({ idempotencyKey: null, replayed: false, retryAfterSeconds: null })
        expect("requestId" in missing ? missing.requestId : null).toMatch(/^[0-9a-f-]{36}$/)

        // A refusal recorded under its key (409 LE0006: the reference id is taken) is replayed to the same
        // call, and the error says so, each time with the request id of its own attempt.
        const duplicate = client.addPoints(add, { idempotencyKey: "sdk-duplicate-key" })
        const refused = yield* Effect.flip(duplicate)
        const replayed = yield* Effect.flip(duplicate)
        for (const error of [refused, replayed]) {
          expect(error).toMatchObject({ _tag: "ApiError", status: 409, errors: [{ code: "LE0006" }] })
          expect(error).toMatchObject({ idempotencyKey: "sdk-duplicate-key" })
        }
        expect([refused, replayed].map((error) => "replayed" in error && error.replayed)).toEqual([
          false,
          true,
        ])
        const requestIds = [refused, replayed].map((error) => ("requestId" in error ? error.requestId : null))
        expect(requestIds[0]).not.toBe(requestIds[1])
        expect(requestIds.every((id) => typeof id === "string" && id.length === 36)).toBe(true)
      }),
    )

    it.effect("manages webhook endpoints, reads events, replays them, and verifies what is signed", () =>
      Effect.gen(function* () {
        const { client } = yield* partnerClient
        const user = yield* client.createUser({ partner_user_id: "sdk-hooks", email: "ada@example.com" })
        const created = yield* client.createWebhookEndpoint({
          url: "https://hooks.example.com/in",
          event_types: ["user.created"],
        })
        expect(created.secret).toMatch(/^whsec_/)
        const listed = yield* client.listWebhookEndpoints({ limit: 10 })
        expect(listed.data.map((endpoint) => endpoint.id)).toEqual([created.id])
        const updated = yield* client.updateWebhookEndpoint(created.id, { description: "SDK" })
        expect(updated.description).toBe("SDK")
        const rotated = yield* client.rotateWebhookEndpointSecret(created.id)
        expect(rotated.secret).not.toBe(created.secret)

        const events = yield* client.listEvents({ type: "user.created" })
        const event = events.data.find((candidate) => candidate.data.id === user.id)
        if (event === undefined) return expect.fail("no user.created event for the user")
        expect(yield* client.getEvent(event.id)).toEqual(event)
        expect(yield* client.replayWebhookEvents(created.id, { event_ids: [event.id] })).toEqual({
          replayed: 1,
        })
        const deliveries = yield* client.listWebhookDeliveries(created.id)
        expect(deliveries.data.map((delivery) => delivery.event_id)).toEqual([event.id])

        // Signed as the server signs a delivery (with both secrets during the rotation's grace period): the
        // receiver holding either one gets the event back, decoded.
        const body = JSON.stringify(event)
        const headers = { ...signWebhook(event.id, new Date(), body, [rotated.secret, created.secret]) }
        expect(yield* verifyWebhook({ secrets: created.secret, body, headers })).toEqual(event)
        expect(yield* verifyWebhook({ secrets: rotated.secret, body, headers })).toEqual(event)

        expect((yield* client.deleteWebhookEndpoint(created.id)).id).toBe(created.id)
        const gone = yield* Effect.flip(client.getWebhookEndpoint(created.id))
        expect(gone).toMatchObject({ status: 404, errors: [{ code: "LE0002" }] })
      }),
    )

    it.effect("revokes its access token: the server refuses it, and the client goes on with a new one", () =>
      Effect.gen(function* () {
        const { client } = yield* partnerClient
        sentAuthorizations.length = 0
        yield* client.listEvents()
        const [first] = sentAuthorizations.filter((value) => value !== undefined)
        if (first === undefined) return expect.fail("the client sent no bearer token")
        yield* client.revokeAccessToken
        const refused = yield* call("GET", "/api/events", { token: first.slice("Bearer ".length) })
        expect(refused.status).toBe(401)
        yield* client.listEvents()
        const used = sentAuthorizations.filter((value) => value !== undefined)
        expect(used.at(-1)).not.toBe(first)
      }),
    )
  },
)

import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { encodeCursor } from "@points/domain"
import { ApiError } from "@points/http-api"
import { Effect } from "effect"
import { InvalidRequest, makePointsClient, type RetryPolicy } from "../src/index.js"
import { deliveryBody, endpointBody, userCreatedEvent } from "./fixtures.js"
import { errorBody, type ScriptedServer, scriptedServer } from "./scripted-server.js"

const fast: Partial<RetryPolicy> = { initialDelay: "5 millis", maxDelay: "20 millis" }

const clientOf = (server: ScriptedServer) =>
  makePointsClient({
    baseUrl: server.baseUrl,
    clientId: "client-1",
    clientSecret: "pos_cs_secret",
    retry: fast,
  }).pipe(Effect.provide(FetchHttpClient.layer))

const endpoints = "/api/webhooks/endpoints"
const cursor = encodeCursor("webhook_endpoints", "01a2014e-b620-72ff-8803-d383bbc69108")

describe("The Points client, for webhooks and events", () => {
  it.scopedLive("manages webhook endpoints: keys on the POSTs only, ids as path segments", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", endpoints, [{ status: 201, body: endpointBody("e-1", "whsec_one") }])
      server.script("GET", endpoints, [
        { status: 200, body: { data: [endpointBody("e-1")], next_cursor: null } },
      ])
      server.script("GET", `${endpoints}/e-1`, [{ status: 200, body: endpointBody("e-1") }])
      server.script("PATCH", `${endpoints}/e-1`, [{ status: 200, body: endpointBody("e-1") }])
      server.script("POST", `${endpoints}/e-1/rotate-secret`, [
        { status: 200, body: endpointBody("e-1", "whsec_two") },
      ])
      server.script("DELETE", `${endpoints}/e-1`, [
        { status: 200, body: endpointBody("e-1") },
        { status: 404, body: errorBody("LE0002", "webhook endpoint not found") },
      ])
      const client = yield* clientOf(server)

      const created = yield* client.createWebhookEndpoint(
        { url: "https://hooks.example.com/in", event_types: ["points.added"] },
        { idempotencyKey: "endpoint-1" },
      )
      expect(created.secret).toBe("whsec_one")
      const page = yield* client.listWebhookEndpoints({ limit: 5, cursor })
      expect(page.data.map((endpoint) => endpoint.id)).toEqual(["e-1"])
      expect((yield* client.getWebhookEndpoint("e-1")).id).toBe("e-1")
      yield* client.updateWebhookEndpoint("e-1", { enabled: false, description: null })
      expect((yield* client.rotateWebhookEndpointSecret("e-1")).secret).toBe("whsec_two")
      expect((yield* client.deleteWebhookEndpoint("e-1")).id).toBe("e-1")
      const again = yield* Effect.flip(client.deleteWebhookEndpoint("e-1"))
      expect(again).toBeInstanceOf(ApiError)
      expect(again).toMatchObject({ status: 404, errors: [{ code: "LE0002" }] })

      const [create] = server.requestsTo("POST", endpoints)
      expect(create?.headers["idempotency-key"]).toBe("endpoint-1")
      expect(JSON.parse(create?.body ?? "")).toEqual({
        url: "https://hooks.example.com/in",
        event_types: ["points.added"],
      })
      expect(new URLSearchParams(server.requestsTo("GET", endpoints)[0]?.query)).toEqual(
        new URLSearchParams({ limit: "5", cursor }),
      )
      const [patch] = server.requestsTo("PATCH", `${endpoints}/e-1`)
      expect(JSON.parse(patch?.body ?? "")).toEqual({ enabled: false, description: null })
      expect(patch?.headers["idempotency-key"]).toBeUndefined()
      const [rotate] = server.requestsTo("POST", `${endpoints}/e-1/rotate-secret`)
      expect(rotate?.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/)
      expect(server.requestsTo("DELETE", `${endpoints}/e-1`)).toHaveLength(2)
    }),
  )

  it.scopedLive("lists deliveries and replays events with one key for every attempt", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      const path = `${endpoints}/e%2F1`
      server.script("GET", `${path}/deliveries`, [
        { status: 200, body: { data: [deliveryBody("d-1", "ev-1")], next_cursor: "c-2" } },
      ])
      server.script("POST", `${path}/replay`, ["drop", { status: 202, body: { replayed: 3 } }])
      const client = yield* clientOf(server)

      const deliveries = yield* client.listWebhookDeliveries("e/1", { limit: 1 })
      expect(deliveries).toEqual({ data: [deliveryBody("d-1", "ev-1")], next_cursor: "c-2" })
      const replayed = yield* client.replayWebhookEvents("e/1", { since: "2025-01-31T00:00:00Z" })
      expect(replayed).toEqual({ replayed: 3 })

      expect(server.requestsTo("GET", `${path}/deliveries`)[0]?.query).toBe("limit=1")
      const attempts = server.requestsTo("POST", `${path}/replay`)
      expect(attempts).toHaveLength(2)
      expect(new Set(attempts.map((attempt) => attempt.headers["idempotency-key"])).size).toBe(1)
      expect(JSON.parse(attempts[1]?.body ?? "")).toEqual({ since: "2025-01-31T00:00:00Z" })
    }),
  )

  it.scopedLive("reads public events by type and time, and one by id", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      const event = userCreatedEvent("ev-1", "u-1")
      server.script("GET", "/api/events", [{ status: 200, body: { data: [event], next_cursor: null } }])
      server.script("GET", "/api/events/ev-1", [{ status: 200, body: event }])
      const client = yield* clientOf(server)

      const page = yield* client.listEvents({ type: "user.created", since: "2025-01-31T00:00:00Z" })
      expect(page.data[0]).toMatchObject({ id: "ev-1", type: "user.created", data: { id: "u-1" } })
      const one = yield* client.getEvent("ev-1")
      expect(one.type === "user.created" && one.data.status).toBe("processing")
      expect(new URLSearchParams(server.requestsTo("GET", "/api/events")[0]?.query)).toEqual(
        new URLSearchParams({ type: "user.created", since: "2025-01-31T00:00:00Z" }),
      )
    }),
  )

  it.scopedLive("refuses input the contract refuses before sending anything", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      const client = yield* clientOf(server)
      const calls: ReadonlyArray<Effect.Effect<unknown, unknown>> = [
        client.createWebhookEndpoint({ url: "not a url" }),
        client.replayWebhookEvents("e-1", { since: "yesterday" }),
        client.listEvents({ since: "31/01/2025" }),
        client.listWebhookDeliveries("e-1", { limit: 0 }),
        client.getWebhookEndpoint(".."),
        // A cursor of another list: the server would refuse it too.
        client.listWebhookDeliveries("e-1", { cursor }),
        client.listEvents({ cursor: "not-a-cursor" }),
      ]
      const refusals = yield* Effect.all(calls.map((call) => Effect.flip(call)))
      for (const refusal of refusals) expect(refusal).toBeInstanceOf(InvalidRequest)
      expect(server.received).toEqual([])
    }),
  )

  it.scopedLive("revokes the token it holds, then gets a new one for the next call", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/oauth/revoke", [{ status: 200 }])
      server.script("GET", "/api/events/ev-1", [{ status: 200, body: userCreatedEvent("ev-1", "u-1") }])
      const client = yield* clientOf(server)

      // Holding none yet, there is nothing to revoke.
      yield* client.revokeAccessToken
      expect(server.received).toEqual([])
      yield* client.getEvent("ev-1")
      yield* client.revokeAccessToken
      yield* client.getEvent("ev-1")

      const [revoke] = server.requestsTo("POST", "/api/oauth/revoke")
      expect(Object.fromEntries(new URLSearchParams(revoke?.body))).toEqual({
        token: "tok-1",
        token_type_hint: "access_token",
        client_id: "client-1",
        client_secret: "pos_cs_secret",
      })
      expect(revoke?.headers.authorization).toBeUndefined()
      const reads = server.requestsTo("GET", "/api/events/ev-1")
      expect(reads.map((read) => read.headers.authorization)).toEqual(["Bearer tok-1", "Bearer tok-2"])
    }),
  )

  it.scopedLive("keeps the token when its revocation fails, to revoke it again", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/oauth/revoke", [
        { status: 401, body: errorBody("GH1001", "invalid client") },
        { status: 200 },
      ])
      server.script("GET", "/api/events/ev-1", [{ status: 200, body: userCreatedEvent("ev-1", "u-1") }])
      const client = yield* clientOf(server)
      yield* client.getEvent("ev-1")
      const refused = yield* Effect.flip(client.revokeAccessToken)
      expect(refused).toMatchObject({ status: 401 })
      yield* client.getEvent("ev-1")
      yield* client.revokeAccessToken
      const revoked = server.requestsTo("POST", "/api/oauth/revoke").map((request) => request.body)
      expect(revoked.map((body) => new URLSearchParams(body).get("token"))).toEqual(["tok-1", "tok-1"])
      expect(server.requestsTo("GET", "/api/events/ev-1").map((r) => r.headers.authorization)).toEqual([
        "Bearer tok-1",
        "Bearer tok-1",
      ])
    }),
  )
})

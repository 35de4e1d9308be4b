import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { PartnerId, SigningSecretId, WebhookEndpoint, WebhookEndpointId } from "@points/domain"
import { runUnitOfWork, webhookStream } from "@points/infrastructure"
import { Effect, Schema } from "effect"
import { v7 as uuidV7 } from "uuid"
import { call, newPartner, testServerWithoutActivation } from "./harness.js"

// Stand-ins until the endpoints API and the public event publisher land (issue 5): an endpoint through its
// stream with its secret, and a public event row.
const createEndpoint = (partnerId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const endpointId = WebhookEndpointId.make(uuidV7())
    const secretId = SigningSecretId.make(uuidV7())
    yield* sql`
      INSERT INTO webhook_signing_secrets (id, partner_id, endpoint_id, secret)
      VALUES (${secretId}, ${partnerId}, ${endpointId}, ${"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})`
    yield* runUnitOfWork(
      { endpoint: webhookStream(endpointId) },
      (s) =>
        Effect.map(
          WebhookEndpoint.decide(
            WebhookEndpoint.CreateEndpoint.make({
              endpointId,
              partnerId: PartnerId.make(partnerId),
              url: Schema.decodeSync(WebhookEndpoint.WebhookUrl)("https://hooks.example.com/in"),
              eventTypes: [],
              description: null,
              enabled: true,
              secretId,
              allowPrivateTargets: false,
            }),
            s.endpoint,
          ),
          (events) => ({ endpoint: events }),
        ),
      { partnerId, requestId: null, idempotencyKey: null, causationId: null, correlationId: null },
    )
    return endpointId as string
  })

const publishEvent = (partnerId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = uuidV7()
    yield* sql`
      INSERT INTO public_events (id, partner_id, type, occurred_at, data, global_position)
      VALUES (${id}, ${partnerId}, 'user.created', now(), ${JSON.stringify({ id: uuidV7(), version: 1 })}::jsonb, 0)`
    return id
  })

layer(testServerWithoutActivation(), { timeout: "120 seconds", excludeTestServices: true })(
  "webhook deliveries over HTTP",
  (it) => {
    it.effect("replays a partner's event to its endpoint (202) and lists the attempt it scheduled", () =>
      Effect.gen(function* () {
        const { partnerId, token } = yield* newPartner()
        const endpointId = yield* createEndpoint(partnerId)
        const eventId = yield* publishEvent(partnerId)
        const path = `/api/webhooks/endpoints/${endpointId}`

        const empty = yield* call("GET", `${path}/deliveries`, { token })
        expect(empty.status).toBe(200)
        expect(empty.body).toEqual({ data: [], next_cursor: null })

        const headers = { "idempotency-key": "replay-1" }
        const replay = yield* call("POST", `${path}/replay`, {
          token,
          json: { event_ids: [eventId] },
          headers,
        })
        expect(replay.status).toBe(202)
        expect(replay.body).toEqual({ replayed: 1 })
        const again = yield* call("POST", `${path}/replay`, {
          token,
          json: { event_ids: [eventId] },
          headers,
        })
        expect(again.status).toBe(202)
        expect(again.headers.get("idempotent-replayed")).toBe("true")

        const listed = yield* call("GET", `${path}/deliveries?limit=10`, { token })
        expect(listed.status).toBe(200)
        expect(listed.body.data).toHaveLength(1)
        expect(listed.body.data[0]).toMatchObject({
          event_id: eventId,
          attempt: 1,
          status: "pending",
          response_status: null,
          duration_ms: null,
          error: null,
          attempted_at: null,
        })
        expect(listed.body.data[0].next_attempt_at).toMatch(/Z$/)

        const byTime = yield* call("POST", `${path}/replay`, {
          token,
          json: { since: "2000-01-01T00:00:00Z" },
        })
        expect(byTime.body).toEqual({ replayed: 1 })
      }),
    )

    it.effect(
      "answers 404 LE0002 for another partner's endpoint or event, and 400 GH1006 for bad input",
      () =>
        Effect.gen(function* () {
          const mine = yield* newPartner("Mine")
          const theirs = yield* newPartner("Theirs")
          const endpointId = yield* createEndpoint(mine.partnerId)
          const theirEndpoint = yield* createEndpoint(theirs.partnerId)
          const theirEvent = yield* publishEvent(theirs.partnerId)
          const path = `/api/webhooks/endpoints/${endpointId}`
          const code = (reply: {
            readonly body: { readonly errors: ReadonlyArray<{ readonly code: string }> }
          }) => reply.body.errors[0]?.code

          const foreign = yield* call("GET", `/api/webhooks/endpoints/${theirEndpoint}/deliveries`, {
            token: mine.token,
          })
          expect([foreign.status, code(foreign)]).toEqual([404, "LE0002"])
          const unknown = yield* call("GET", "/api/webhooks/endpoints/not-an-id/deliveries", {
            token: mine.token,
          })
          expect([unknown.status, code(unknown)]).toEqual([404, "LE0002"])
          const foreignEvent = yield* call("POST", `${path}/replay`, {
            token: mine.token,
            json: { event_ids: [theirEvent] },
          })
          expect([foreignEvent.status, code(foreignEvent)]).toEqual([404, "LE0002"])
          expect(foreignEvent.body.errors[0].message).toBe("event not found")

          for (const json of [{ since: "yesterday" }, { event_ids: "all" }, {}, { event_ids: [] }]) {
            const bad = yield* call("POST", `${path}/replay`, { token: mine.token, json })
            expect([bad.status, code(bad)]).toEqual([400, "GH1006"])
          }
          const badLimit = yield* call("GET", `${path}/deliveries?limit=0`, { token: mine.token })
          expect([badLimit.status, code(badLimit)]).toEqual([400, "GH1006"])
          const listed = yield* call("GET", `${path}/deliveries`, { token: mine.token })
          expect(listed.body.data).toEqual([])
        }),
    )
  },
)

import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, newPartner, testServerWithoutActivation } from "./harness.js"

/** Registers an endpoint through the API; its id. */
const createEndpoint = (token: string) =>
  Effect.map(
    call("POST", "/api/webhooks/endpoints", { token, json: { url: "https://hooks.example.com/in" } }),
    (reply) => {
      expect(reply.status).toBe(201)
      return reply.body.id as string
    },
  )

/** Registers a user through the API, which announces `user.created`; that event's id. */
const publishEvent = (token: string) =>
  Effect.gen(function* () {
    const user = yield* call("POST", "/api/users", {
      token,
      json: { partner_user_id: `p-${Math.random().toString(36).slice(2)}`, email: "one@example.com" },
    })
    const events = yield* call("GET", "/api/events?type=user.created&limit=100", { token })
    const event = events.body.data.find(
      (candidate: { data: { id: string } }) => candidate.data.id === user.body.id,
    )
    expect(event).toBeDefined()
    return event.id as string
  })

/** A new partner with an endpoint and one event of its own: its token, the event's id, the endpoint's path. */
const partnerWithEndpointAndEvent = Effect.gen(function* () {
  const { token } = yield* newPartner()
  const endpointId = yield* createEndpoint(token)
  const eventId = yield* publishEvent(token)
  return { token, eventId, path: `/api/webhooks/endpoints/${endpointId}` }
})

layer(testServerWithoutActivation(), { timeout: "120 seconds", excludeTestServices: true })(
  "webhook deliveries over HTTP",
  (it) => {
    it.effect("replays a partner's event to its endpoint (202) and lists the attempt it scheduled", () =>
      Effect.gen(function* () {
        const { token, eventId, path } = yield* partnerWithEndpointAndEvent

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

    it.effect("disabling an endpoint ends its pending attempts at once; enabling it again revives none", () =>
      Effect.gen(function* () {
        const { token, eventId, path } = yield* partnerWithEndpointAndEvent
        const replay = yield* call("POST", `${path}/replay`, { token, json: { event_ids: [eventId] } })
        expect(replay.body).toEqual({ replayed: 1 })
        const pending = yield* call("GET", `${path}/deliveries`, { token })
        expect(pending.body.data.map((row: { status: string }) => row.status)).toEqual(["pending"])

        const disabled = yield* call("PATCH", path, { token, json: { enabled: false } })
        expect(disabled.status).toBe(200)
        expect(disabled.body).toMatchObject({ enabled: false, disabled_reason: null })
        const ended = yield* call("GET", `${path}/deliveries`, { token })
        expect(ended.body.data).toHaveLength(1)
        expect(ended.body.data[0]).toMatchObject({
          event_id: eventId,
          attempt: 1,
          status: "failed",
          response_status: null,
          error: "not attempted: the endpoint was disabled by the partner",
          next_attempt_at: null,
        })
        expect(ended.body.data[0].attempted_at).toMatch(/Z$/)

        const enabled = yield* call("PATCH", path, { token, json: { enabled: true } })
        expect(enabled.body).toMatchObject({ enabled: true })
        const after = yield* call("GET", `${path}/deliveries`, { token })
        expect(after.body.data).toEqual(ended.body.data)
      }),
    )

    it.effect(
      "refuses a replay to a disabled endpoint (409 LE0008), recorded against its key like any 409",
      () =>
        Effect.gen(function* () {
          const { token, eventId, path } = yield* partnerWithEndpointAndEvent
          const disabled = yield* call("PATCH", path, { token, json: { enabled: false } })
          expect(disabled.status).toBe(200)

          const headers = { "idempotency-key": "replay-while-disabled" }
          const json = { since: "2000-01-01T00:00:00Z" }
          const refused = yield* call("POST", `${path}/replay`, { token, json, headers })
          expect(refused.status).toBe(409)
          expect(refused.body.errors).toEqual([
            {
              id: expect.any(String),
              code: "LE0008",
              message:
                'webhook endpoint is disabled: enable it with PATCH {"enabled": true} before replaying',
            },
          ])
          const listed = yield* call("GET", `${path}/deliveries`, { token })
          expect(listed.body.data).toEqual([])

          // Enabled again: the key still answers its recorded refusal; a new request replays.
          const enabled = yield* call("PATCH", path, { token, json: { enabled: true } })
          expect(enabled.body).toMatchObject({ enabled: true })
          const again = yield* call("POST", `${path}/replay`, { token, json, headers })
          expect(again.status).toBe(409)
          expect(again.headers.get("idempotent-replayed")).toBe("true")
          expect(again.body).toEqual(refused.body)
          expect((yield* call("GET", `${path}/deliveries`, { token })).body.data).toEqual([])
          const replayed = yield* call("POST", `${path}/replay`, {
            token,
            json,
            headers: { "idempotency-key": "replay-once-enabled" },
          })
          expect([replayed.status, replayed.body]).toEqual([202, { replayed: 1 }])
          const pending = yield* call("GET", `${path}/deliveries`, { token })
          expect(
            pending.body.data.map((row: { event_id: string; status: string }) => [row.event_id, row.status]),
          ).toEqual([[eventId, "pending"]])
        }),
    )

    it.effect(
      "answers 404 LE0002 for another partner's endpoint or event, and 400 GH1006 for bad input",
      () =>
        Effect.gen(function* () {
          const mine = yield* newPartner("Mine")
          const theirs = yield* newPartner("Theirs")
          const endpointId = yield* createEndpoint(mine.token)
          const theirEndpoint = yield* createEndpoint(theirs.token)
          const theirEvent = yield* publishEvent(theirs.token)
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

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { PartnerId } from "@points/domain"
import { Effect, Fiber } from "effect"
import {
  disableEndpoint,
  listWebhookDeliveries,
  type RequestContext,
  replayWebhookDeliveries,
  runWebhookDispatcher,
  runWebhookFanOut,
  updateWebhookEndpoint,
} from "../../src/index.js"
import { lockWaiters } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"
import {
  createEndpoint,
  deliveriesOf,
  eventually,
  publishEvent,
  runUncommitted,
  startReceiver,
  verifies,
  webhookDatabase,
} from "./webhook-fixtures.js"

const contextOf = (partnerId: string): RequestContext => ({
  partnerId: PartnerId.make(partnerId),
  requestId: `req-${newId()}`,
  idempotencyKey: null,
})

const deliver = Effect.all([
  Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" })),
  Effect.forkScoped(
    runWebhookDispatcher({ retrySchedule: [0], allowPrivateTargets: true, pollInterval: "200 millis" }),
  ),
])

const allSettled = (count: number) => (rows: ReadonlyArray<{ readonly status: string }>) =>
  rows.length === count && rows.every((row) => row.status === "succeeded")

layer(webhookDatabase(), { excludeTestServices: true })("replay and the deliveries list", (it) => {
  it.scoped("replays by id and by time range to one endpoint, keeping each event's id", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver()
      const partner = newId()
      const context = contextOf(partner)
      const users = yield* createEndpoint(partner, {
        url: receiver.url("/users"),
        eventTypes: ["user.created"],
      })
      const other = yield* createEndpoint(partner, { url: receiver.url("/other") })
      yield* deliver
      const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 12, minute))
      const e1 = yield* publishEvent(partner, { occurredAt: at(0) })
      const e2 = yield* publishEvent(partner, { occurredAt: at(10) })
      const points = yield* publishEvent(partner, { occurredAt: at(15), type: "points.added" })
      const e3 = yield* publishEvent(partner, { occurredAt: at(20) })
      yield* eventually(deliveriesOf(users.endpointId), allSettled(3))
      const originalBody = receiver.withId(e2)[0]?.body

      // By id: exactly those, whatever the endpoint's filter (points.added included).
      const byIds = yield* replayWebhookDeliveries(context, users.endpointId, { event_ids: [e2, points] })
      expect(byIds).toEqual({ replayed: 2 })
      yield* eventually(deliveriesOf(users.endpointId), allSettled(5))
      const replayed = receiver.withId(e2).filter((r) => r.path === "/users")
      expect(replayed).toHaveLength(2)
      expect(replayed[1]?.body).toBe(originalBody)
      expect(JSON.parse(replayed[1]?.body ?? "{}").id).toBe(e2)
      expect(replayed.every((request) => verifies(request, users.secret))).toBe(true)
      expect(receiver.withId(points).filter((r) => r.path === "/users")).toHaveLength(1)

      // By time: [since, until), only the types the endpoint subscribes to.
      const byTime = yield* replayWebhookDeliveries(context, users.endpointId, {
        since: "2025-01-01T12:10:00Z",
        until: "2025-01-01T12:20:00Z",
      })
      expect(byTime).toEqual({ replayed: 1 })
      // Delivered before the next replay: an attempt still pending would be brought forward, not repeated.
      yield* eventually(deliveriesOf(users.endpointId), allSettled(6))
      const since = yield* replayWebhookDeliveries(context, users.endpointId, {
        since: "2025-01-01T12:05:00+00:00",
      })
      expect(since).toEqual({ replayed: 2 })
      const rows = yield* eventually(deliveriesOf(users.endpointId), allSettled(8))
      const countOf = (id: string) => rows.filter((row) => row.event_id === id).length
      expect([countOf(e1), countOf(e2), countOf(points), countOf(e3)]).toEqual([1, 4, 1, 2])
      expect(rows.every((row) => row.attempt === 1)).toBe(true)
      // The other endpoint got nothing replayed.
      expect(yield* deliveriesOf(other.endpointId)).toHaveLength(4)
    }),
  )

  it.scoped("refuses what is not the partner's, and bad selections, replaying nothing", () =>
    Effect.gen(function* () {
      const partner = newId()
      const stranger = newId()
      const context = contextOf(partner)
      const endpoint = yield* createEndpoint(partner, { url: "https://hooks.example.com/in" })
      const strangers = yield* createEndpoint(stranger, { url: "https://hooks.example.com/in" })
      const mine = yield* publishEvent(partner)
      const theirs = yield* publishEvent(stranger)
      const failure = <E extends { readonly message: string }, R>(effect: Effect.Effect<unknown, E, R>) =>
        Effect.map(Effect.flip(effect), (error) =>
          "code" in error ? `${error.code} ${error.message}` : error.message,
        )

      expect(
        yield* failure(replayWebhookDeliveries(context, endpoint.endpointId, { event_ids: [mine, theirs] })),
      ).toBe("LE0002 event not found")
      expect(
        yield* failure(replayWebhookDeliveries(context, endpoint.endpointId, { event_ids: ["nope"] })),
      ).toBe("LE0002 event not found")
      expect(
        yield* failure(replayWebhookDeliveries(context, strangers.endpointId, { event_ids: [mine] })),
      ).toBe("LE0002 webhook endpoint not found")
      expect(yield* failure(listWebhookDeliveries(context, strangers.endpointId, {}))).toBe(
        "LE0002 webhook endpoint not found",
      )
      expect(yield* failure(replayWebhookDeliveries(context, endpoint.endpointId, {}))).toMatch(/^GH1006 /)
      expect(
        yield* failure(replayWebhookDeliveries(context, endpoint.endpointId, { since: "yesterday" })),
      ).toMatch(/^GH1006 since must be an ISO-8601 timestamp/)
      expect(
        yield* failure(
          replayWebhookDeliveries(context, endpoint.endpointId, {
            since: "2025-02-01T00:00:00Z",
            until: "2025-01-01T00:00:00Z",
          }),
        ),
      ).toBe("GH1006 until must not be before since")
      expect(
        yield* failure(
          replayWebhookDeliveries(context, endpoint.endpointId, {
            event_ids: [mine],
            since: "2025-01-01T00:00:00Z",
          }),
        ),
      ).toBe("GH1006 event_ids cannot be combined with since or until")
      expect(
        yield* failure(replayWebhookDeliveries(context, endpoint.endpointId, { event_ids: [] })),
      ).toMatch(/^GH1006 event_ids must name 1 to/)
      // A range of more than 10,000 events names the field the request gave (it always said `since`).
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        INSERT INTO public_events (id, partner_id, type, occurred_at, data, global_position)
        SELECT gen_random_uuid(), ${partner}, 'user.created', '2025-01-01T00:00:00Z', '{}'::jsonb, n
        FROM generate_series(1000000001, 1000010001) AS n`
      expect(
        yield* failure(
          replayWebhookDeliveries(context, endpoint.endpointId, { until: "2025-01-02T00:00:00Z" }),
        ),
      ).toBe("GH1006 until selects more than 10000 events; replay a shorter range at a time")
      expect(
        yield* failure(
          replayWebhookDeliveries(context, endpoint.endpointId, { since: "2024-12-31T00:00:00Z" }),
        ),
      ).toBe("GH1006 since selects more than 10000 events; replay a shorter range at a time")
      expect(yield* deliveriesOf(endpoint.endpointId)).toEqual([])
    }),
  )

  it.effect("refuses a disabled endpoint (LE0008), whoever disabled it, scheduling nothing", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const partner = newId()
      const context = contextOf(partner)
      const allow = { allowPrivateTargets: true }
      const byPartner = yield* createEndpoint(partner, { url: "https://hooks.example.com/partner" })
      const byPlatform = yield* createEndpoint(partner, { url: "https://hooks.example.com/gone" })
      const event = yield* publishEvent(partner, { occurredAt: new Date("2025-01-01T12:00:00Z") })
      yield* updateWebhookEndpoint(context, byPartner.endpointId, { enabled: false }, allow)
      yield* sql.withTransaction(disableEndpoint(partner, byPlatform.endpointId, "gone"))

      for (const endpoint of [byPartner, byPlatform]) {
        for (const request of [{ event_ids: [event] }, { since: "2000-01-01T00:00:00Z" }]) {
          const refused = yield* Effect.flip(replayWebhookDeliveries(context, endpoint.endpointId, request))
          expect(refused._tag === "EndpointDisabled" && [refused.code, refused.status]).toEqual([
            "LE0008",
            409,
          ])
        }
        expect(yield* deliveriesOf(endpoint.endpointId)).toEqual([])
      }

      // Enabled again, it takes what it missed.
      yield* updateWebhookEndpoint(context, byPlatform.endpointId, { enabled: true }, allow)
      expect(
        yield* replayWebhookDeliveries(context, byPlatform.endpointId, { since: "2000-01-01T00:00:00Z" }),
      ).toEqual({ replayed: 1 })
      const rows = yield* deliveriesOf(byPlatform.endpointId)
      expect(rows.map((row) => [row.event_id, row.attempt, row.status])).toEqual([[event, 1, "pending"]])
    }),
  )

  // Some session waits for a lock: the statement held up by the other transaction.
  const someoneWaitsForALock = Effect.map(lockWaiters, (waiting) => waiting > 0)

  it.effect("a replay waits for a disable being committed, and is then refused", () =>
    Effect.gen(function* () {
      const partner = newId()
      const context = contextOf(partner)
      const endpoint = yield* createEndpoint(partner, { url: "https://hooks.example.com/in" })
      const event = yield* publishEvent(partner)
      const commitDisable = yield* runUncommitted(
        updateWebhookEndpoint(
          context,
          endpoint.endpointId,
          { enabled: false },
          { allowPrivateTargets: true },
        ),
      )
      const replaying = yield* Effect.fork(
        Effect.either(replayWebhookDeliveries(context, endpoint.endpointId, { event_ids: [event] })),
      )
      // Read before the disable commits, the endpoint would still look enabled: the replay must wait for it.
      yield* eventually(
        Effect.zipWith(
          someoneWaitsForALock,
          Fiber.poll(replaying),
          (waits, done) => waits || done._tag === "Some",
        ),
        (waitsOrDone) => waitsOrDone,
      )
      yield* commitDisable
      const replayed = yield* Fiber.join(replaying)
      expect(replayed._tag === "Left" && replayed.left._tag).toBe("EndpointDisabled")
      expect(yield* deliveriesOf(endpoint.endpointId)).toEqual([])
    }),
  )

  it.effect("a disable waits for a replay being committed, then ends the attempts it scheduled", () =>
    Effect.gen(function* () {
      const partner = newId()
      const context = contextOf(partner)
      const endpoint = yield* createEndpoint(partner, { url: "https://hooks.example.com/in" })
      const event = yield* publishEvent(partner)
      const commitReplay = yield* runUncommitted(
        replayWebhookDeliveries(context, endpoint.endpointId, { event_ids: [event] }),
      )
      const disabling = yield* Effect.fork(
        updateWebhookEndpoint(
          context,
          endpoint.endpointId,
          { enabled: false },
          { allowPrivateTargets: true },
        ),
      )
      // Not waiting, the disable would end the pending attempts it sees, not the replay's uncommitted one.
      yield* eventually(
        Effect.zipWith(
          someoneWaitsForALock,
          Fiber.poll(disabling),
          (waits, done) => waits || done._tag === "Some",
        ),
        (waitsOrDone) => waitsOrDone,
      )
      expect(yield* commitReplay).toEqual({ replayed: 1 })
      yield* Fiber.join(disabling)
      const rows = yield* deliveriesOf(endpoint.endpointId)
      expect(rows.map((row) => [row.event_id, row.status, row.error])).toEqual([
        [event, "failed", "not attempted: the endpoint was disabled by the partner"],
      ])
    }),
  )

  it.scoped("lists an endpoint's attempts newest first, page by page", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver((_, earlier) =>
        earlier === 0 ? { status: 502 } : { status: 200 },
      )
      const partner = newId()
      const context = contextOf(partner)
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      yield* Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" }))
      yield* Effect.forkScoped(
        runWebhookDispatcher({
          retrySchedule: [0, 0],
          allowPrivateTargets: true,
          pollInterval: "200 millis",
        }),
      )
      const first = yield* publishEvent(partner)
      yield* eventually(
        deliveriesOf(endpoint.endpointId),
        (rows) => rows.filter((r) => r.status === "succeeded").length === 1,
      )
      const second = yield* publishEvent(partner)
      yield* eventually(
        deliveriesOf(endpoint.endpointId),
        (rows) => rows.filter((r) => r.status === "succeeded").length === 2,
      )

      const page1 = yield* listWebhookDeliveries(context, endpoint.endpointId, { limit: 3 })
      expect(page1.data.map((d) => [d.event_id, d.attempt, d.status, d.response_status])).toEqual([
        [second, 2, "succeeded", 200],
        [second, 1, "failed", 502],
        [first, 2, "succeeded", 200],
      ])
      expect(page1.next_cursor).not.toBeNull()
      const page2 = yield* listWebhookDeliveries(context, endpoint.endpointId, {
        limit: 3,
        cursor: page1.next_cursor ?? undefined,
      })
      expect(page2.data.map((d) => [d.event_id, d.attempt, d.status])).toEqual([[first, 1, "failed"]])
      expect(page2.next_cursor).toBeNull()
      const failed = page2.data[0]
      expect(failed).toMatchObject({ error: "HTTP 502", response_status: 502 })
      expect(failed?.attempted_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      expect(failed?.next_attempt_at).toMatch(/Z$/)
      expect(typeof failed?.duration_ms).toBe("number")
      expect(Object.keys(failed ?? {}).sort()).toEqual([
        "attempt",
        "attempted_at",
        "duration_ms",
        "error",
        "event_id",
        "id",
        "next_attempt_at",
        "response_status",
        "status",
      ])
    }),
  )
  it.scoped("never stacks attempts of an event: one still pending is made due now instead", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const partner = newId()
      const context = contextOf(partner)
      const endpoint = yield* createEndpoint(partner, { url: "https://receiver.example/hooks" })
      // No dispatcher runs: what a replay schedules stays pending.
      const e1 = yield* publishEvent(partner, {})
      const e2 = yield* publishEvent(partner, {})
      const pendingRows = Effect.map(deliveriesOf(endpoint.endpointId), (rows) =>
        rows.filter((row) => row.status === "pending").map((row) => row.event_id),
      )
      const replay = replayWebhookDeliveries(context, endpoint.endpointId, { event_ids: [e1, e2] })
      expect(yield* replay).toEqual({ replayed: 2 })
      expect((yield* pendingRows).sort()).toEqual([e1, e2].sort())
      // Again, and many at once: still one pending attempt of each.
      expect(yield* replay).toEqual({ replayed: 2 })
      yield* Effect.all(
        Array.from({ length: 10 }, () => replay),
        { concurrency: "unbounded" },
      )
      expect((yield* pendingRows).sort()).toEqual([e1, e2].sort())
      // An attempt waiting for its retry (due in an hour) is brought forward, keeping its attempt number.
      yield* sql`
        UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour', attempt = 3
        WHERE endpoint_id = ${endpoint.endpointId} AND event_id = ${e1}`
      expect(yield* replayWebhookDeliveries(context, endpoint.endpointId, { event_ids: [e1] })).toEqual({
        replayed: 1,
      })
      const [waiting] = yield* sql<{ attempt: number; due: boolean }>`
        SELECT attempt, next_attempt_at <= now() AS due FROM webhook_deliveries
        WHERE endpoint_id = ${endpoint.endpointId} AND event_id = ${e1}`
      expect(waiting).toEqual({ attempt: 3, due: true })
      expect((yield* pendingRows).sort()).toEqual([e1, e2].sort())
    }),
  )
})

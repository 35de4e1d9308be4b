import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { PartnerId } from "@points/domain"
import { Effect } from "effect"
import {
  type DispatcherOptions,
  runWebhookDispatcher,
  runWebhookFanOut,
  updateWebhookEndpoint,
  WEBHOOK_FANOUT_CONSUMER,
  waitUntilCaughtUp,
} from "../../src/index.js"
import { lockWaiters } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"
import {
  createEndpoint,
  deleteEndpoint,
  deliveriesOf,
  eventually,
  holdEndpointStream,
  publishEvent,
  rotateSecret,
  runUncommitted,
  sampleDataFor,
  startReceiver,
  verifies,
  webhookDatabase,
} from "./webhook-fixtures.js"

// Real sockets, a real database and the live clock; a compressed schedule (a second between attempts).
const quick: DispatcherOptions = {
  retrySchedule: [0, 1, 1],
  allowPrivateTargets: true,
  pollInterval: "200 millis",
  sendTimeout: "1500 millis",
  lease: "7 seconds",
}

const runDelivery = (options: DispatcherOptions = quick) =>
  Effect.all([
    Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" })),
    Effect.forkScoped(runWebhookDispatcher(options)),
  ])

const endpointRow = (endpointId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ enabled: boolean; disabled_reason: string | null }>`
      SELECT enabled, disabled_reason FROM webhook_endpoints WHERE id = ${endpointId}`,
  )

// A promise the test settles when it chooses: what a receiver waits for, or what it tells the test.
const gate = () => {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open: () => open(), opened }
}

// A partner's endpoint whose receiver holds the first request open until `release`, then answers it 500 (and
// every later one 204); returned once that first attempt is in flight, with a way to enable or disable it.
const firstAttemptHeldOpen = (retrySchedule: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const inFlight = gate()
    const released = gate()
    let requests = 0
    const receiver = yield* startReceiver(() => {
      if (requests++ > 0) return { status: 204 }
      inFlight.open()
      return { status: 500, after: released.opened }
    })
    const partner = newId()
    const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
    // A send timeout far beyond the test's steps: the held attempt must end with the receiver's 500, never
    // with a timeout, however slow the machine.
    yield* runDelivery({ ...quick, retrySchedule, sendTimeout: "30 seconds", lease: "40 seconds" })
    const first = yield* publishEvent(partner)
    yield* Effect.promise(() => inFlight.opened)
    const context = { partnerId: PartnerId.make(partner), requestId: `req-${newId()}`, idempotencyKey: null }
    const setEnabled = (enabled: boolean) =>
      updateWebhookEndpoint(context, endpoint.endpointId, { enabled }, { allowPrivateTargets: true })
    return { receiver, partner, endpoint, first, release: () => released.open(), setEnabled }
  })

const settled = (rows: ReadonlyArray<{ readonly status: string }>, count: number) =>
  rows.length === count && rows.every((row) => row.status !== "pending")

layer(webhookDatabase(), { excludeTestServices: true })("webhook delivery", (it) => {
  it.scoped("delivers each public event, signed, to the endpoints subscribed to its type only", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver()
      const partner = newId()
      const all = yield* createEndpoint(partner, { url: receiver.url("/all") })
      const orders = yield* createEndpoint(partner, {
        url: receiver.url("/orders"),
        eventTypes: ["order.created", "order.status_changed"],
      })
      const otherPartner = yield* createEndpoint(newId(), { url: receiver.url("/other") })
      yield* runDelivery()
      const data = sampleDataFor("order.created")
      const created = yield* publishEvent(partner, {
        type: "order.created",
        data,
        occurredAt: new Date("2025-03-01T10:00:00.123Z"),
      })
      const user = yield* publishEvent(partner, { type: "user.created" })

      yield* eventually(Effect.succeed(receiver.received), (received) => received.length === 3)
      const byPath = (path: string) => receiver.received.filter((request) => request.path === path)
      expect(
        byPath("/all")
          .map((r) => r.headers["webhook-id"])
          .sort(),
      ).toEqual([created, user].sort())
      expect(byPath("/orders").map((r) => r.headers["webhook-id"])).toEqual([created])
      expect(byPath("/other")).toEqual([])
      for (const request of byPath("/all")) expect(verifies(request, all.secret)).toBe(true)
      const [order] = byPath("/orders")
      if (order === undefined) return expect.unreachable()
      expect(verifies(order, orders.secret)).toBe(true)
      expect(verifies(order, all.secret)).toBe(false)
      expect(verifies(order, otherPartner.secret)).toBe(false)
      // The body is exactly the public event; its id is the webhook-id.
      expect(JSON.parse(order.body)).toEqual({
        id: created,
        type: "order.created",
        timestamp: "2025-03-01T10:00:00.123Z",
        data,
      })
      expect(order.headers["content-type"]).toBe("application/json")
      expect(Math.abs(Number(order.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30)

      const rows = yield* eventually(deliveriesOf(orders.endpointId), (r) => settled(r, 1))
      expect(rows[0]).toMatchObject({
        event_id: created,
        attempt: 1,
        status: "succeeded",
        response_status: 204,
      })
      expect(rows[0]?.duration_ms).toBeGreaterThanOrEqual(0)
      expect(rows[0]?.next_attempt_at).toBeNull()
      // Fan-out moved on: nothing pends for the other partner's endpoint.
      yield* waitUntilCaughtUp(WEBHOOK_FANOUT_CONSUMER, "head", "10 seconds")
      expect(yield* deliveriesOf(otherPartner.endpointId)).toEqual([])
    }),
  )

  it.scoped("retries a failing receiver with the same webhook-id and records every attempt", () =>
    Effect.gen(function* () {
      // 500 with a body, then no answer within the send timeout, then 200.
      const receiver = yield* startReceiver((_, earlier) =>
        earlier === 0 ? { status: 500, body: "boom" } : earlier === 1 ? { hang: true } : { status: 200 },
      )
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      yield* runDelivery()
      const event = yield* publishEvent(partner)

      const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 3))
      expect(receiver.withId(event)).toHaveLength(3)
      for (const request of receiver.withId(event)) {
        expect(verifies(request, endpoint.secret)).toBe(true)
        expect(JSON.parse(request.body).id).toBe(event)
      }
      expect(rows.map((row) => [row.attempt, row.status, row.response_status])).toEqual([
        [1, "failed", 500],
        [2, "failed", null],
        [3, "succeeded", 200],
      ])
      const [first, second, third] = rows
      if (first === undefined || second === undefined || third === undefined) return expect.unreachable()
      expect(first.error).toBe("HTTP 500: boom")
      expect(second.error).toBe("no response within 1500 ms")
      expect(second.duration_ms).toBeGreaterThanOrEqual(1400)
      expect(third.error).toBeNull()
      // Each failure names when the next attempt is due: a second later, per the schedule.
      for (const failed of [first, second]) {
        const wait = (failed.next_attempt_at?.getTime() ?? 0) - (failed.attempted_at?.getTime() ?? 0)
        expect(wait).toBeGreaterThanOrEqual(1000)
      }
      expect(third.next_attempt_at).toBeNull()
    }),
  )

  it.scoped("gives up after the last attempt of the schedule", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ({ status: 503 }))
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      yield* runDelivery({ ...quick, retrySchedule: [0, 0] })
      const event = yield* publishEvent(partner)
      const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 2))
      expect(rows.map((row) => [row.attempt, row.status, row.error])).toEqual([
        [1, "failed", "HTTP 503"],
        [2, "failed", "HTTP 503"],
      ])
      expect(rows[1]?.next_attempt_at).toBeNull()
      expect(receiver.withId(event)).toHaveLength(2)
      // Still enabled: giving up on one event is not five days of failure.
      expect(yield* endpointRow(endpoint.endpointId)).toEqual([{ enabled: true, disabled_reason: null }])
    }),
  )

  it.scoped("honours Retry-After when it asks for longer than the schedule", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver((_, earlier) =>
        earlier === 0 ? { status: 429, headers: { "retry-after": "2" } } : { status: 200 },
      )
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      yield* runDelivery({ ...quick, retrySchedule: [0, 0] })
      const event = yield* publishEvent(partner)
      const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 2))
      const [first, second] = receiver.withId(event)
      if (first === undefined || second === undefined) return expect.unreachable()
      expect(second.at - first.at).toBeGreaterThanOrEqual(1900)
      const wait = (rows[0]?.next_attempt_at?.getTime() ?? 0) - (rows[0]?.attempted_at?.getTime() ?? 0)
      expect(wait).toBeGreaterThanOrEqual(2000)
      expect(rows.map((row) => row.status)).toEqual(["failed", "succeeded"])
    }),
  )

  it.scoped("makes no attempt claimed while the disabling of a 410 Gone is still being recorded", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const receiver = yield* startReceiver(() => ({ status: 410 }))
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      // Two events fanned out; the second one's attempt not due until the test says so.
      yield* Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" }))
      const first = yield* publishEvent(partner)
      const second = yield* publishEvent(partner)
      yield* eventually(deliveriesOf(endpoint.endpointId), (rows) => rows.length === 2)
      yield* sql`
        UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE event_id = ${second}`
      // The endpoint's stream held: the first attempt's 410 is recorded up to its disabling, which waits.
      const letGo = yield* holdEndpointStream(partner, endpoint.endpointId)
      yield* Effect.forkScoped(runWebhookDispatcher({ ...quick, concurrency: 4, perPartnerConcurrency: 4 }))
      yield* eventually(
        Effect.sync(() => receiver.received.length),
        (count) => count === 1,
      )
      yield* eventually(lockWaiters, (waiting) => waiting > 0)
      // Now the second attempt falls due and is claimed: the endpoint still looks enabled to the claim.
      yield* sql`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE event_id = ${second}`
      yield* eventually(deliveriesOf(endpoint.endpointId), (rows) =>
        rows.some((row) => row.event_id === second && row.leased_by !== null),
      )
      yield* letGo
      const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 2))
      // The receiver said it is gone: it got nothing more.
      expect(receiver.received).toHaveLength(1)
      expect(rows.find((row) => row.event_id === first)).toMatchObject({ response_status: 410 })
      expect(rows.find((row) => row.event_id === second)).toMatchObject({
        status: "failed",
        response_status: null,
        error: "not attempted: the endpoint was disabled: it answered 410 Gone",
      })
      expect(yield* endpointRow(endpoint.endpointId)).toEqual([{ enabled: false, disabled_reason: "gone" }])
    }),
  )

  it.scoped("disables an endpoint that answers 410 Gone, and ends its pending attempts", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ({ status: 410 }))
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      // Both events are fanned out before anything is sent; one attempt at a time.
      yield* Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" }))
      yield* publishEvent(partner)
      yield* publishEvent(partner)
      yield* eventually(deliveriesOf(endpoint.endpointId), (rows) => rows.length === 2)
      yield* Effect.forkScoped(runWebhookDispatcher({ ...quick, concurrency: 1 }))

      const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 2))
      expect(receiver.received).toHaveLength(1)
      const [made, ended] = [...rows].sort((a, b) =>
        a.response_status === 410 ? -1 : b.response_status === 410 ? 1 : 0,
      )
      expect(made).toMatchObject({ status: "failed", response_status: 410, error: "HTTP 410" })
      expect(made?.next_attempt_at).toBeNull()
      expect(ended).toMatchObject({
        status: "failed",
        response_status: null,
        error: "not attempted: the endpoint was disabled: it answered 410 Gone",
      })
      expect(yield* endpointRow(endpoint.endpointId)).toEqual([{ enabled: false, disabled_reason: "gone" }])
      // A disabled endpoint gets nothing new.
      yield* publishEvent(partner)
      yield* waitUntilCaughtUp(WEBHOOK_FANOUT_CONSUMER, "head", "10 seconds")
      expect(yield* deliveriesOf(endpoint.endpointId)).toHaveLength(2)
    }),
  )

  it.scoped("disables an endpoint failing for 5 days; a success clears the streak", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const failing = yield* startReceiver(() => ({ status: 500 }))
      const healthy = yield* startReceiver(() => ({ status: 200 }))
      const partner = newId()
      const down = yield* createEndpoint(partner, { url: failing.url() })
      const up = yield* createEndpoint(partner, { url: healthy.url() })
      // Both have been failing since 5 days and a minute ago (the clock we control is the streak's start).
      for (const endpoint of [down, up]) {
        yield* sql`
          INSERT INTO webhook_endpoint_failures (endpoint_id, partner_id, failing_since)
          VALUES (${endpoint.endpointId}, ${partner}, now() - interval '5 days 1 minute')`
      }
      yield* runDelivery()
      yield* publishEvent(partner)

      yield* eventually(endpointRow(down.endpointId), (rows) => rows[0]?.enabled === false)
      expect(yield* endpointRow(down.endpointId)).toEqual([{ enabled: false, disabled_reason: "failing" }])
      const downRows = yield* eventually(deliveriesOf(down.endpointId), (r) => settled(r, 1))
      // No retry is left pending for a disabled endpoint.
      expect(downRows.map((row) => [row.status, row.response_status])).toEqual([["failed", 500]])
      yield* eventually(deliveriesOf(up.endpointId), (r) => settled(r, 1))
      expect(yield* endpointRow(up.endpointId)).toEqual([{ enabled: true, disabled_reason: null }])
      const streaks = yield* sql<{ endpoint_id: string }>`
        SELECT endpoint_id FROM webhook_endpoint_failures WHERE endpoint_id IN (${down.endpointId}, ${up.endpointId})`
      expect(streaks).toEqual([])
    }),
  )

  it.scoped("a fresh failure starts a streak without disabling", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const receiver = yield* startReceiver(() => ({ status: 500 }))
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      yield* runDelivery({ ...quick, retrySchedule: [0] })
      yield* publishEvent(partner)
      yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 1))
      const streak = yield* sql<{ failing_since: Date }>`
        SELECT failing_since FROM webhook_endpoint_failures WHERE endpoint_id = ${endpoint.endpointId}`
      expect(streak).toHaveLength(1)
      expect(Date.now() - (streak[0]?.failing_since.getTime() ?? 0)).toBeLessThan(60_000)
      expect(yield* endpointRow(endpoint.endpointId)).toEqual([{ enabled: true, disabled_reason: null }])
    }),
  )

  // An endpoint rotated `rotations` times, and the one delivery of an event to it: the request as received
  // and every secret the endpoint ever had, the first one first.
  const deliveredAfterRotations = (rotations: number) =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver()
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      const secrets = [endpoint.secret]
      for (let n = 0; n < rotations; n++) secrets.push(yield* rotateSecret(partner, endpoint.endpointId))
      yield* runDelivery()
      const event = yield* publishEvent(partner)
      const [request] = yield* eventually(
        Effect.sync(() => receiver.withId(event)),
        (received) => received.length === 1,
      )
      if (request === undefined) return yield* Effect.dieMessage("no delivery")
      return { request, secrets }
    })

  it.scoped("after a rotation both secrets sign: a receiver with either verifies", () =>
    Effect.gen(function* () {
      const { request, secrets } = yield* deliveredAfterRotations(1)
      expect(String(request.headers["webhook-signature"]).split(" ")).toHaveLength(2)
      for (const secret of secrets) expect(verifies(request, secret)).toBe(true)
      expect(verifies(request, `whsec_${Buffer.alloc(24, 1).toString("base64")}`)).toBe(false)
    }),
  )

  it.scoped("after three rotations within a day only the newest secret and the one it replaced sign", () =>
    Effect.gen(function* () {
      const { request, secrets } = yield* deliveredAfterRotations(3)
      // One signature per signing secret: uncapped, a secret rotated hundreds of times a day made a header
      // receivers refuse (431).
      expect(String(request.headers["webhook-signature"]).split(" ")).toHaveLength(2)
      expect(secrets).toHaveLength(4)
      for (const secret of secrets.slice(2)) expect(verifies(request, secret)).toBe(true)
      for (const secret of secrets.slice(0, 2)) expect(verifies(request, secret)).toBe(false)
    }),
  )

  it.scoped("refuses a private or loopback target at delivery unless allowed", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver()
      const partner = newId()
      const literal = yield* createEndpoint(partner, { url: receiver.url() })
      const named = yield* createEndpoint(partner, { url: receiver.url().replace("127.0.0.1", "localhost") })
      yield* runDelivery({ ...quick, allowPrivateTargets: false, retrySchedule: [0] })
      yield* publishEvent(partner)
      for (const endpoint of [literal, named]) {
        const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 1))
        expect(rows[0]?.status).toBe("failed")
        expect(rows[0]?.response_status).toBeNull()
        expect(rows[0]?.error).toMatch(/private, loopback or link-local address/)
      }
      expect(receiver.received).toEqual([])
    }),
  )

  it.scoped("reads a bounded part of a huge error response and keeps it as the error", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ({ stream: { status: 500, bytes: 200 * 1024 * 1024 } }))
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      yield* runDelivery({ ...quick, retrySchedule: [0] })
      yield* publishEvent(partner)
      const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 1))
      const error = rows[0]?.error ?? ""
      expect(error.startsWith("HTTP 500: xxxx")).toBe(true)
      expect(error.length).toBeLessThanOrEqual("HTTP 500: ".length + 4096)
      // The client closed the connection long before the 200 MiB were written.
      yield* eventually(
        Effect.sync(() => receiver.streamed),
        (streamed) => streamed.length === 1,
      )
      expect(receiver.streamed[0]).toBeLessThan(32 * 1024 * 1024)
    }),
  )

  it.scoped("ends the pending attempts of a deleted endpoint without sending them", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver()
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      yield* Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" }))
      yield* publishEvent(partner)
      yield* eventually(deliveriesOf(endpoint.endpointId), (rows) => rows.length === 1)
      yield* deleteEndpoint(partner, endpoint.endpointId)
      yield* Effect.forkScoped(runWebhookDispatcher(quick))
      const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 1))
      expect(rows[0]).toMatchObject({ status: "failed", error: "not attempted: the endpoint was deleted" })
      expect(receiver.received).toEqual([])
    }),
  )

  it.scoped("a partner's disable ends the pending retry at once; enabling again sends none of it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // Only the very first request fails: the retry it schedules is the one the disable must end.
      let requests = 0
      const receiver = yield* startReceiver(() => (requests++ === 0 ? { status: 500 } : { status: 204 }))
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      // The retry falls due long after the test has disabled the endpoint: nothing races the disable.
      yield* runDelivery({ ...quick, retrySchedule: [0, 60] })
      const first = yield* publishEvent(partner)
      yield* eventually(deliveriesOf(endpoint.endpointId), (rows) => rows.length === 2)

      const context = {
        partnerId: PartnerId.make(partner),
        requestId: `req-${newId()}`,
        idempotencyKey: null,
      }
      const allow = { allowPrivateTargets: true }
      const disabled = yield* updateWebhookEndpoint(context, endpoint.endpointId, { enabled: false }, allow)
      expect(disabled).toMatchObject({ enabled: false, disabled_reason: null })
      // Ended by the disable itself, not later by a dispatcher.
      const rows = yield* deliveriesOf(endpoint.endpointId)
      expect(rows.map((row) => [row.attempt, row.status, row.response_status, row.error])).toEqual([
        [1, "failed", 500, "HTTP 500"],
        [2, "failed", null, "not attempted: the endpoint was disabled by the partner"],
      ])
      expect(rows[1]?.next_attempt_at).toBeNull()

      yield* updateWebhookEndpoint(context, endpoint.endpointId, { enabled: true }, allow)
      // Were the retry still pending, it would now be due, and sent before the next event.
      yield* sql`UPDATE webhook_deliveries SET next_attempt_at = now()
                 WHERE endpoint_id = ${endpoint.endpointId} AND status = 'pending'`
      const next = yield* publishEvent(partner)
      yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 3))
      expect(receiver.withId(first)).toHaveLength(1)
      expect(receiver.withId(next)).toHaveLength(1)
    }),
  )

  it.scoped(
    "an attempt in flight when the partner disables the endpoint schedules no retry if it fails",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { receiver, partner, endpoint, first, release, setEnabled } = yield* firstAttemptHeldOpen([
          0, 60,
        ])
        yield* setEnabled(false)
        release()
        const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => r[0]?.status === "failed")
        expect(rows.map((row) => [row.attempt, row.status, row.response_status])).toEqual([
          [1, "failed", 500],
        ])
        // Nor a failing streak: enabled days later, the endpoint's first failure would disable it at once.
        const streaks =
          yield* sql`SELECT 1 FROM webhook_endpoint_failures WHERE endpoint_id = ${endpoint.endpointId}`
        expect(streaks).toHaveLength(0)

        yield* setEnabled(true)
        // Were a retry pending, it would now be due, and sent before the next event.
        yield* sql`UPDATE webhook_deliveries SET next_attempt_at = now()
                 WHERE endpoint_id = ${endpoint.endpointId} AND status = 'pending'`
        const next = yield* publishEvent(partner)
        yield* eventually(deliveriesOf(endpoint.endpointId), (r) =>
          r.some((row) => row.event_id === next && row.status !== "pending"),
        )
        expect(receiver.withId(first)).toHaveLength(1)
        expect(receiver.withId(next)).toHaveLength(1)
      }),
  )

  it.scoped("an attempt in flight across a disable and an enabling schedules no retry if it fails", () =>
    Effect.gen(function* () {
      // A retry would be due at once: a second request would arrive before the test looks.
      const { receiver, partner, endpoint, first, release, setEnabled } = yield* firstAttemptHeldOpen([0, 0])
      yield* setEnabled(false)
      yield* setEnabled(true)
      release()
      yield* eventually(deliveriesOf(endpoint.endpointId), (r) => r[0]?.status === "failed")
      const next = yield* publishEvent(partner)
      const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 2))
      expect(rows.map((row) => [row.event_id, row.attempt, row.status])).toEqual([
        [first, 1, "failed"],
        [next, 1, "succeeded"],
      ])
      expect(receiver.withId(first)).toHaveLength(1)
    }),
  )

  it.scoped("a failed attempt recorded while the partner's disable commits leaves no retry pending", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { endpoint, release, setEnabled } = yield* firstAttemptHeldOpen([0, 60])
      // The disable has ended the pending attempts but not committed when the attempt fails and is recorded.
      const commitDisable = yield* runUncommitted(setEnabled(false))
      release()
      // The recording either waits for the disable's lock or (without that lock) is already written.
      yield* eventually(
        Effect.map(
          sql<{ waiting: number; recorded: number }>`
            SELECT (SELECT count(*)::int FROM pg_stat_activity
                    WHERE wait_event_type = 'Lock' AND datname = current_database()) AS waiting,
                   (SELECT count(*)::int FROM webhook_deliveries
                    WHERE endpoint_id = ${endpoint.endpointId} AND status = 'failed') AS recorded`,
          (rows) => (rows[0]?.waiting ?? 0) > 0 || (rows[0]?.recorded ?? 0) > 0,
        ),
        (waitingOrRecorded) => waitingOrRecorded,
      )
      yield* commitDisable
      const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => r[0]?.status === "failed")
      expect(rows.map((row) => [row.attempt, row.status, row.response_status])).toEqual([[1, "failed", 500]])
    }),
  )

  it.scoped(
    "fails the attempt of an event that is not a valid public event, and goes on delivering the others",
    () =>
      Effect.gen(function* () {
        const receiver = yield* startReceiver()
        const partner = newId()
        const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
        yield* runDelivery()
        const corrupt = yield* publishEvent(partner, { type: "order.created", data: { id: newId() } })
        const valid = yield* publishEvent(partner, { type: "user.created" })
        const rows = yield* eventually(deliveriesOf(endpoint.endpointId), (r) => settled(r, 2))
        expect(rows.find((row) => row.event_id === corrupt)).toMatchObject({
          status: "failed",
          error: `not attempted: event ${corrupt} is not a valid public event object`,
          next_attempt_at: null,
        })
        expect(rows.find((row) => row.event_id === valid)).toMatchObject({ status: "succeeded" })
        expect(receiver.received.map((request) => request.headers["webhook-id"])).toEqual([valid])
      }),
  )
})

describe("options", () => {
  layer(webhookDatabase(2), { excludeTestServices: true })("checked", (it) => {
    it.effect("refuses a lease that does not outlast the send timeout", () =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(
          runWebhookDispatcher({ sendTimeout: "10 seconds", lease: "12 seconds" }),
        )
        expect(String(exit)).toContain("lease must exceed sendTimeout by at least 5 seconds")
      }),
    )

    it.effect("refuses a partner's share that is not a whole number of attempts from 1 to 256", () =>
      Effect.gen(function* () {
        for (const perPartnerConcurrency of [0, 1.5, 257]) {
          const exit = yield* Effect.exit(runWebhookDispatcher({ perPartnerConcurrency }))
          expect(String(exit)).toContain("perPartnerConcurrency must be an integer from 1 to 256")
        }
      }),
    )
  })
})

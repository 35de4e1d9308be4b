import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import {
  claimDueDeliveries,
  type DispatcherOptions,
  LAPSED_ERROR,
  runWebhookDispatcher,
  runWebhookFanOut,
  STOPPED_ERROR,
} from "../../src/index.js"
import { newId } from "../fixtures.js"
import {
  createEndpoint,
  deliveriesOf,
  eventually,
  holdClaimsLock,
  holdEndpointStream,
  publishEvent,
  startReceiver,
  webhookDatabase,
} from "./webhook-fixtures.js"

const quick: DispatcherOptions = {
  retrySchedule: [0, 3600],
  allowPrivateTargets: true,
  pollInterval: "100 millis",
  sendTimeout: "30 seconds",
  lease: "40 seconds",
}

const statuses = (rows: ReadonlyArray<{ readonly attempt: number; readonly status: string }>) =>
  rows.map((row) => [row.attempt, row.status])

// A dispatcher in a scope of its own making an event's first attempt, which the receiver holds until the test
// ends (it answers every later one).
const attemptUnderWay = Effect.gen(function* () {
  const receiver = yield* startReceiver((_request, earlier) =>
    earlier === 0 ? { hang: true } : { status: 204 },
  )
  const partner = newId()
  const { endpointId } = yield* createEndpoint(partner, { url: receiver.url() })
  yield* Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" }))
  yield* publishEvent(partner)
  const first = yield* Scope.make()
  yield* Effect.forkIn(runWebhookDispatcher(quick), first)
  yield* eventually(
    Effect.sync(() => receiver.received.length),
    (n) => n === 1,
  )
  return { receiver, partner, endpointId, first }
})

// One delivery record per attempt (DESIGN.md section 6), also for an attempt whose outcome is unknown.
layer(webhookDatabase(), { excludeTestServices: true })("attempts cut off", (it) => {
  it.scoped(
    "a dispatcher stopped mid-attempt records it as cut off; the next attempt is made at once, as attempt 2",
    () =>
      Effect.gen(function* () {
        const { receiver, endpointId, first } = yield* attemptUnderWay
        yield* Scope.close(first, Exit.void)
        const [cut, next] = yield* deliveriesOf(endpointId)
        expect(cut).toMatchObject({
          attempt: 1,
          status: "failed",
          error: STOPPED_ERROR,
          response_status: null,
        })
        expect(next).toMatchObject({ attempt: 2, status: "pending", leased_by: null })

        yield* Effect.forkScoped(runWebhookDispatcher(quick))
        const rows = yield* eventually(
          deliveriesOf(endpointId),
          (rows) => rows.at(-1)?.status === "succeeded",
        )
        expect(statuses(rows)).toEqual([
          [1, "failed"],
          [2, "succeeded"],
        ])
        expect(receiver.received).toHaveLength(2)
      }),
  )

  it.scoped(
    "an attempt whose lease ran out unrecorded (its dispatcher died) is recorded as cut off by the next claim",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const receiver = yield* startReceiver()
        const partner = newId()
        const { endpointId } = yield* createEndpoint(partner, { url: receiver.url() })
        yield* Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" }))
        yield* publishEvent(partner)
        yield* eventually(deliveriesOf(endpointId), (rows) => rows.length === 1)
        // Claimed by a dispatcher that then died: its lease runs out with nothing recorded.
        const [claimed] = yield* claimDueDeliveries({
          limit: 1,
          perPartner: 8,
          lease: "40 seconds",
          token: "dead/1",
        })
        expect(claimed?.endpoint_id).toBe(endpointId)
        yield* sql`UPDATE webhook_deliveries SET lease_until = now() - interval '1 second' WHERE id = ${claimed?.id ?? ""}`

        const dispatcher = yield* Effect.forkScoped(runWebhookDispatcher(quick))
        const rows = yield* eventually(
          deliveriesOf(endpointId),
          (rows) => rows.at(-1)?.status === "succeeded",
        )
        expect(rows.map(({ attempt, status, error }) => ({ attempt, status, error }))).toEqual([
          { attempt: 1, status: "failed", error: LAPSED_ERROR },
          { attempt: 2, status: "succeeded", error: null },
        ])
        // Recorded at the time it was claimed.
        expect(rows[0]?.attempted_at).toEqual(claimed?.claimed_at)
        expect(receiver.received).toHaveLength(1)
        yield* Fiber.interrupt(dispatcher)
      }),
  )

  it.scoped(
    "a dispatcher stopped while the endpoint's stream is held ends its lease at once; a later claim records it",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { partner, endpointId, first } = yield* attemptUnderWay
        // A transaction holds the endpoint's stream (a stalled process) until the test lets it go.
        const letGo = yield* holdEndpointStream(partner, endpointId)
        yield* Scope.close(first, Exit.void)
        // Not recorded (the stream is held), but no longer counted in flight for the lease's 40 s.
        const [leased] = yield* sql<{ status: string; lapsed: boolean }>`
          SELECT status, lease_until <= now() AS lapsed FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`
        expect(leased).toEqual({ status: "pending", lapsed: true })
        yield* letGo
        yield* Effect.forkScoped(runWebhookDispatcher(quick))
        const rows = yield* eventually(
          deliveriesOf(endpointId),
          (rows) => rows.at(-1)?.status === "succeeded",
        )
        expect(rows.map(({ attempt, status, error }) => ({ attempt, status, error }))).toEqual([
          { attempt: 1, status: "failed", error: LAPSED_ERROR },
          { attempt: 2, status: "succeeded", error: null },
        ])
      }),
  )

  it.scoped("a dispatcher stopped while its claim waits for the claims' lock leaves no attempt leased", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const receiver = yield* startReceiver()
      const partner = newId()
      const { endpointId } = yield* createEndpoint(partner, { url: receiver.url() })
      yield* Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" }))
      yield* publishEvent(partner)
      yield* eventually(deliveriesOf(endpointId), (rows) => rows.length === 1)
      // A claim that stalls while it holds the lock (a paused process): held until the test lets it go.
      const letGo = yield* holdClaimsLock
      const dispatcher = yield* Scope.make()
      yield* Effect.forkIn(runWebhookDispatcher(quick), dispatcher)
      yield* eventually(
        sql<{
          n: number
        }>`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
        (rows) => (rows[0]?.n ?? 0) > 0,
      )
      const stopping = yield* Effect.fork(Scope.close(dispatcher, Exit.void))
      yield* letGo
      yield* Fiber.join(stopping)
      // Whatever the claim took was started and cut off, or never claimed: nothing waits for a lease.
      const rows = yield* sql<{ leased: boolean }>`
        SELECT coalesce(lease_until > now(), false) AS leased FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`
      expect(rows.filter((row) => row.leased)).toEqual([])
    }),
  )
})

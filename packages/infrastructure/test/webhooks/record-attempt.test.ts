import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { PartnerId } from "@points/domain"
import { Effect } from "effect"
import {
  type AttemptResult,
  type ClaimedDelivery,
  claimDueDeliveries,
  disableEndpoint,
  LAPSED_ERROR,
  recordAttempt,
  recordCutOff,
  recordLapsedAttempts,
  STOPPED_ERROR,
  STOPPING_LOCK_WAIT,
  updateWebhookEndpoint,
} from "../../src/index.js"
import { newId } from "../fixtures.js"
import {
  createEndpoint,
  deliveriesOf,
  holdEndpointStream,
  publishEvent,
  webhookDatabase,
} from "./webhook-fixtures.js"

// The dispatcher's record path on its own: a claim, what happens to the endpoint while the attempt is made
// (nothing is sent), and the record of a failure.

const failure: AttemptResult = {
  status: "failed",
  responseStatus: null,
  durationMs: 10_000,
  error: "no answer within 10 s",
  nextInSeconds: 5,
  disable: null,
  made: true,
}

const record = (claim: ClaimedDelivery) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(recordAttempt(claim, failure, { disableAfterFailingFor: "5 days" })),
  )

// A partner's endpoint with one first attempt due now; the attempt as a dispatcher claims it.
const claimedAttempt = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const partner = newId()
  const { endpointId } = yield* createEndpoint(partner, { url: "https://hooks.example.com/in" })
  const eventId = yield* publishEvent(partner)
  const id = newId()
  yield* sql`
    INSERT INTO webhook_deliveries (id, partner_id, endpoint_id, event_id, attempt, status, next_attempt_at)
    VALUES (${id}, ${partner}, ${endpointId}, ${eventId}, 1, 'pending', now())`
  return { partner, endpointId, claim: yield* claimOf(id) }
})

// Claims due attempts (each test's own among them) and returns the claim of `id`.
const claimOf = (id: string) =>
  Effect.gen(function* () {
    const claimed = yield* claimDueDeliveries({
      limit: 100,
      perPartner: 8,
      lease: "60 seconds",
      token: `test/${newId()}`,
    })
    const claim = claimed.find((candidate) => candidate.id === id)
    if (claim === undefined) return yield* Effect.dieMessage(`attempt ${id} was not claimed`)
    return claim
  })

const setEnabled = (partner: string, endpointId: string, enabled: boolean) =>
  updateWebhookEndpoint(
    { partnerId: PartnerId.make(partner), requestId: `req-${newId()}`, idempotencyKey: null },
    endpointId,
    { enabled },
    { allowPrivateTargets: true },
  )

const attemptsOf = (endpointId: string) =>
  Effect.map(deliveriesOf(endpointId), (rows) => rows.map((row) => [row.attempt, row.status]))

const streakOf = (endpointId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`SELECT failing_since FROM webhook_endpoint_failures WHERE endpoint_id = ${endpointId}`,
  )

layer(webhookDatabase(), { excludeTestServices: true })("recording an attempt", (it) => {
  it.effect("a failure schedules the next attempt and starts the endpoint's failing streak", () =>
    Effect.gen(function* () {
      const { endpointId, claim } = yield* claimedAttempt
      expect(yield* record(claim)).toBe(true)
      expect(yield* attemptsOf(endpointId)).toEqual([
        [1, "failed"],
        [2, "pending"],
      ])
      expect(yield* streakOf(endpointId)).toHaveLength(1)
    }),
  )

  it.effect(
    "a failure of an attempt claimed before the partner disabled and enabled the endpoint schedules no retry",
    () =>
      Effect.gen(function* () {
        const { partner, endpointId, claim } = yield* claimedAttempt
        yield* setEnabled(partner, endpointId, false)
        yield* setEnabled(partner, endpointId, true)
        expect(yield* record(claim)).toBe(true)
        expect(yield* attemptsOf(endpointId)).toEqual([[1, "failed"]])
        expect(yield* streakOf(endpointId)).toHaveLength(0)
      }),
  )

  it.effect(
    "nor when the platform disabled it meanwhile (410 Gone or 5 days failing) and the partner enabled it",
    () =>
      Effect.gen(function* () {
        for (const reason of ["gone", "failing"] as const) {
          const sql = yield* SqlClient.SqlClient
          const { partner, endpointId, claim } = yield* claimedAttempt
          yield* sql.withTransaction(disableEndpoint(partner, endpointId, reason))
          yield* setEnabled(partner, endpointId, true)
          expect(yield* record(claim)).toBe(true)
          expect(yield* attemptsOf(endpointId), reason).toEqual([[1, "failed"]])
          expect(yield* streakOf(endpointId), reason).toHaveLength(0)
        }
      }),
  )

  it.effect(
    "an attempt cut off (its dispatcher stopped) after a disable and an enabling: nothing follows it",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { partner, endpointId, claim } = yield* claimedAttempt
        yield* setEnabled(partner, endpointId, false)
        yield* setEnabled(partner, endpointId, true)
        expect(yield* sql.withTransaction(recordCutOff(claim, STOPPED_ERROR, STOPPING_LOCK_WAIT))).toBe(true)
        expect(yield* attemptsOf(endpointId)).toEqual([[1, "failed"]])
        expect(yield* streakOf(endpointId)).toHaveLength(0)
      }),
  )

  it.effect("an attempt cut off with no disable meanwhile: its next attempt is due at once", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { endpointId, claim } = yield* claimedAttempt
      expect(yield* sql.withTransaction(recordCutOff(claim, STOPPED_ERROR, STOPPING_LOCK_WAIT))).toBe(true)
      expect(yield* attemptsOf(endpointId)).toEqual([
        [1, "failed"],
        [2, "pending"],
      ])
      expect(yield* streakOf(endpointId)).toHaveLength(0)
    }),
  )

  it.effect(
    "an attempt cut off passes its entry of the retry schedule on: the receiver's retries are not spent",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { endpointId, claim } = yield* claimedAttempt
        expect(claim.schedule_step).toBe(1)
        yield* sql.withTransaction(recordCutOff(claim, STOPPED_ERROR, STOPPING_LOCK_WAIT))
        const [, next] = yield* deliveriesOf(endpointId)
        // Attempt 2 stands where attempt 1 stood: its failure waits the schedule's first retry, not its second.
        const second = yield* claimOf(next?.id ?? "")
        expect([second.attempt, second.schedule_step]).toEqual([2, 1])
        yield* record(second)
        const [third] = yield* sql<{ attempt: number; schedule_step: number }>`
        SELECT attempt, schedule_step FROM webhook_deliveries
        WHERE endpoint_id = ${endpointId} AND status = 'pending'`
        expect(third).toEqual({ attempt: 3, schedule_step: 2 })
      }),
  )

  it.effect("a disable records an attempt whose lease ran out unrecorded as cut off, not as never made", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { partner, endpointId, claim } = yield* claimedAttempt
      yield* sql`UPDATE webhook_deliveries SET lease_until = now() - interval '1 second' WHERE id = ${claim.id}`
      yield* setEnabled(partner, endpointId, false)
      const [row] = yield* deliveriesOf(endpointId)
      expect(row).toMatchObject({ attempt: 1, status: "failed", error: LAPSED_ERROR })
      // At the claim's time, not the disable's.
      expect(row?.attempted_at).toEqual(claim.claimed_at)
    }),
  )

  it.scoped(
    "a lapsed attempt whose endpoint's stream is held is left to a later claim; claims go on meanwhile",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { partner, endpointId, claim } = yield* claimedAttempt
        yield* sql`UPDATE webhook_deliveries SET lease_until = now() - interval '1 second' WHERE id = ${claim.id}`
        // A transaction holds the endpoint's stream (a stalled process) until the test lets it go.
        const letGo = yield* holdEndpointStream(partner, endpointId)
        // Another partner's attempt is claimed though the lapsed one cannot be recorded yet.
        const other = yield* claimedAttempt
        expect(other.claim.attempt).toBe(1)
        expect((yield* deliveriesOf(endpointId)).map((row) => row.status)).toEqual(["pending"])
        yield* letGo
        yield* claimDueDeliveries({ limit: 1, perPartner: 8, lease: "60 seconds", token: `test/${newId()}` })
        expect((yield* deliveriesOf(endpointId)).map((row) => [row.status, row.error])).toEqual([
          ["failed", LAPSED_ERROR],
          ["pending", null],
        ])
      }),
  )

  it.scoped("lapsed attempts of an endpoint whose stream is held do not hold a claim up, however many", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { partner, endpointId, claim } = yield* claimedAttempt
      // Seven more lapsed attempts of the same endpoint (a dead dispatcher's share).
      for (let n = 0; n < 7; n++) {
        const eventId = yield* publishEvent(partner)
        yield* sql`
          INSERT INTO webhook_deliveries (id, partner_id, endpoint_id, event_id, attempt, status, next_attempt_at,
                                          lease_until, leased_by, claimed_at)
          VALUES (${newId()}, ${partner}, ${endpointId}, ${eventId}, 1, 'pending', now() - interval '2 minutes',
                  now() - interval '1 minute', 'dead/1', now() - interval '2 minutes')`
      }
      yield* sql`UPDATE webhook_deliveries SET lease_until = now() - interval '1 second' WHERE id = ${claim.id}`
      // A transaction holds the endpoint's stream (a stalled process) until the test lets it go.
      const letGo = yield* holdEndpointStream(partner, endpointId)
      // Far within the 4 s that waiting half a second for each would take.
      const claimed = yield* claimDueDeliveries({
        limit: 1,
        perPartner: 8,
        lease: "60 seconds",
        token: `test/${newId()}`,
      }).pipe(Effect.timeout("2 seconds"))
      expect(Array.isArray(claimed)).toBe(true)
      yield* letGo
      yield* claimDueDeliveries({ limit: 1, perPartner: 8, lease: "60 seconds", token: `test/${newId()}` })
      const rows = yield* deliveriesOf(endpointId)
      expect(rows.filter((row) => row.error === LAPSED_ERROR)).toHaveLength(8)
    }),
  )

  it.effect(
    "a held endpoint with more lapsed attempts than a claim records does not keep another's unrecorded",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { partner, endpointId } = yield* claimedAttempt
        const other = yield* claimedAttempt
        // 101 lapsed attempts of the first endpoint, the oldest, beside the other's one.
        yield* sql`
        INSERT INTO webhook_deliveries (id, partner_id, endpoint_id, event_id, attempt, status, next_attempt_at,
                                        lease_until, leased_by, claimed_at)
        SELECT gen_random_uuid(), ${partner}, ${endpointId}, event_id, 1, 'pending', now() - interval '3 minutes',
               now() - interval '2 minutes' - n * interval '1 millisecond', 'dead/1', now() - interval '3 minutes'
        FROM webhook_deliveries, generate_series(1, 101) n WHERE id = ${other.claim.id}`
        yield* sql`UPDATE webhook_deliveries SET lease_until = now() - interval '1 second' WHERE id = ${other.claim.id}`
        const letGo = yield* holdEndpointStream(partner, endpointId)
        expect(yield* recordLapsedAttempts({ limit: 100 })).toBeGreaterThanOrEqual(1)
        yield* letGo
        const [recorded] = yield* deliveriesOf(other.endpointId)
        expect(recorded).toMatchObject({ attempt: 1, status: "failed", error: LAPSED_ERROR })
      }),
  )
})

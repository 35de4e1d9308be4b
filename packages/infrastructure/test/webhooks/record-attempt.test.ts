import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { PartnerId } from "@points/domain"
import { Effect } from "effect"
import {
  type AttemptResult,
  type ClaimedDelivery,
  claimDueDeliveries,
  disableEndpoint,
  recordAttempt,
  recordCutOff,
  STOPPED_ERROR,
  updateWebhookEndpoint,
} from "../../src/index.js"
import { newId } from "../fixtures.js"
import { createEndpoint, deliveriesOf, publishEvent, webhookDatabase } from "./webhook-fixtures.js"

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
        expect(yield* sql.withTransaction(recordCutOff(claim, STOPPED_ERROR))).toBe(true)
        expect(yield* attemptsOf(endpointId)).toEqual([[1, "failed"]])
        expect(yield* streakOf(endpointId)).toHaveLength(0)
      }),
  )

  it.effect("an attempt cut off with no disable meanwhile: its next attempt is due at once", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { endpointId, claim } = yield* claimedAttempt
      expect(yield* sql.withTransaction(recordCutOff(claim, STOPPED_ERROR))).toBe(true)
      expect(yield* attemptsOf(endpointId)).toEqual([
        [1, "failed"],
        [2, "pending"],
      ])
      expect(yield* streakOf(endpointId)).toHaveLength(0)
    }),
  )
})

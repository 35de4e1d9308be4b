import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import {
  claimDueDeliveries,
  LAPSED_ERROR,
  runWebhookDispatcher,
  runWebhookFanOut,
  untilNextDue,
} from "../../src/index.js"
import { newId } from "../fixtures.js"
import {
  createEndpoint,
  eventually,
  holdClaimsLock,
  publishEvent,
  startReceiver,
  webhookDatabase,
} from "./webhook-fixtures.js"

// Pending attempts of a partner, due `minutesAgo` minutes ago (one second apart, the first the oldest), each
// of a public event of its own; returns their ids in the order they fell due.
const dueAttempts = (partnerId: string, count: number, minutesAgo: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const endpointId = newId()
    const ids: Array<string> = []
    for (let n = 0; n < count; n++) {
      const eventId = yield* publishEvent(partnerId)
      const id = newId()
      yield* sql`
        INSERT INTO webhook_deliveries (id, partner_id, endpoint_id, event_id, attempt, status, next_attempt_at)
        VALUES (${id}, ${partnerId}, ${endpointId}, ${eventId}, 1, 'pending',
                now() - ${minutesAgo * 60 - n} * interval '1 second')`
      ids.push(id)
    }
    return ids
  })

const claim = (limit: number, perPartner: number) =>
  claimDueDeliveries({ limit, perPartner, lease: "60 seconds", token: `test/${newId()}` })

// Every test starts from an empty queue: the claims see the whole table.
const emptyQueue = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM webhook_deliveries`)

const partnersOf = (claimed: ReadonlyArray<{ readonly partner_id: string }>) =>
  claimed.map((row) => row.partner_id)

layer(webhookDatabase(), { excludeTestServices: true })("fair webhook dispatch", (it) => {
  describe("claims", () => {
    it.effect("take every partner's first due attempt before anyone's second, oldest first", () =>
      Effect.gen(function* () {
        yield* emptyQueue
        const [busy, quiet, other] = [newId(), newId(), newId()]
        const backlog = yield* dueAttempts(busy, 5, 10)
        const [single] = yield* dueAttempts(quiet, 1, 2)
        const [another] = yield* dueAttempts(other, 1, 1)

        const first = yield* claim(3, 8)
        expect(new Set(first.map((row) => row.id))).toEqual(new Set([backlog[0], single, another]))
        const rest = yield* claim(10, 8)
        expect(new Set(rest.map((row) => row.id))).toEqual(new Set(backlog.slice(1)))
      }),
    )

    it.effect("count a partner's attempts in flight: its next one waits behind the others' first", () =>
      Effect.gen(function* () {
        yield* emptyQueue
        const [busy, quiet] = [newId(), newId()]
        const backlog = yield* dueAttempts(busy, 4, 10)
        expect((yield* claim(2, 8)).map((row) => row.id)).toEqual(backlog.slice(0, 2))
        // Due later than the whole backlog, yet first in turn: the busy partner has two in flight.
        const [late] = yield* dueAttempts(quiet, 1, 1)
        expect((yield* claim(1, 8)).map((row) => row.id)).toEqual([late])
        expect((yield* claim(1, 8)).map((row) => row.id)).toEqual([backlog[2]])
      }),
    )

    it.effect(
      "never put more than a partner's share in flight; an ended or expired lease frees its place",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* emptyQueue
          const busy = newId()
          const backlog = yield* dueAttempts(busy, 6, 10)
          const [held, expired] = yield* claim(10, 2)
          expect([held?.id, expired?.id]).toEqual(backlog.slice(0, 2))
          expect(yield* claim(10, 2)).toEqual([])
          // One attempt made (recorded), one whose dispatcher died (its lease ran out): two places again. The
          // dead dispatcher's attempt is recorded as cut off (these rows have no endpoint, so nothing follows it).
          yield* sql`
          UPDATE webhook_deliveries SET status = 'succeeded', attempted_at = now(), next_attempt_at = NULL
          WHERE id = ${held?.id ?? ""}`
          yield* sql`UPDATE webhook_deliveries SET lease_until = now() - interval '1 second' WHERE id = ${expired?.id ?? ""}`
          const again = yield* claim(10, 2)
          expect(again.map((row) => row.id)).toEqual(backlog.slice(2, 4))
          expect(partnersOf(again)).toEqual([busy, busy])
          const [cut] = yield* sql<{ status: string; error: string }>`
            SELECT status, error FROM webhook_deliveries WHERE id = ${expired?.id ?? ""}`
          expect(cut).toEqual({ status: "failed", error: LAPSED_ERROR })
        }),
    )

    it.effect("take a partner's endpoints in turn: one endpoint's backlog never hides another's", () =>
      Effect.gen(function* () {
        yield* emptyQueue
        const partner = newId()
        const backlog = yield* dueAttempts(partner, 5, 10)
        const [other] = yield* dueAttempts(partner, 1, 1)
        const first = yield* claim(2, 8)
        expect(new Set(first.map((row) => row.id))).toEqual(new Set([backlog[0], other]))
        // The endpoint with an attempt in flight has taken its turn; the backlog goes on after that.
        expect((yield* claim(1, 8)).map((row) => row.id)).toEqual([backlog[1]])
      }),
    )

    it.effect(
      "give a failing endpoint one attempt in flight at most; its partner's other endpoints the rest",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* emptyQueue
          const partner = newId()
          const failing = yield* dueAttempts(partner, 5, 10)
          const healthy = yield* dueAttempts(partner, 3, 5)
          const [row] = yield* sql<{ endpoint_id: string }>`
            SELECT endpoint_id FROM webhook_deliveries WHERE id = ${failing[0] ?? ""}`
          yield* sql`
            INSERT INTO webhook_endpoint_failures (endpoint_id, partner_id, failing_since)
            VALUES (${row?.endpoint_id ?? ""}, ${partner}, now() - interval '1 minute')`
          const claimed = yield* claim(10, 8)
          expect(new Set(claimed.map((claimed) => claimed.id))).toEqual(new Set([failing[0], ...healthy]))
          // Its one attempt is in flight: nothing more of it, however much room the partner has.
          expect(yield* claim(10, 8)).toEqual([])
          // A success ends the streak: the endpoint takes the partner's share again.
          yield* sql`DELETE FROM webhook_endpoint_failures WHERE endpoint_id = ${row?.endpoint_id ?? ""}`
          expect((yield* claim(10, 8)).map((claimed) => claimed.id)).toEqual(failing.slice(1, 5))
        }),
    )

    it.effect(
      "give failing endpoints half the partner's share together: however many hang, the rest get slots",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* emptyQueue
          const partner = newId()
          // Four failing endpoints with older attempts, one healthy endpoint with newer ones.
          const failing: Array<ReadonlyArray<string>> = []
          for (let n = 0; n < 4; n++) {
            const ids = yield* dueAttempts(partner, 2, 10 + n)
            failing.push(ids)
            yield* sql`
              INSERT INTO webhook_endpoint_failures (endpoint_id, partner_id, failing_since)
              SELECT endpoint_id, partner_id, now() FROM webhook_deliveries WHERE id = ${ids[0] ?? ""}`
          }
          const healthy = yield* dueAttempts(partner, 3, 1)
          // Turns: the healthy endpoint's first, then the failing ones' probes (oldest first) up to half of
          // 4, then the healthy endpoint's second.
          const first = yield* claim(10, 4)
          expect(new Set(first.map((row) => row.id))).toEqual(
            new Set([healthy[0], healthy[1], failing[3]?.[0], failing[2]?.[0]]),
          )
          // The healthy attempts succeed: no third probe (two failing in flight), the healthy one's third.
          yield* sql`
            UPDATE webhook_deliveries SET status = 'succeeded', attempted_at = now(), next_attempt_at = NULL
            WHERE id IN ${sql.in(healthy.slice(0, 2))}`
          expect((yield* claim(10, 4)).map((row) => row.id)).toEqual([healthy[2]])
        }),
    )

    it.effect(
      "give a failing endpoint its probe while a healthy endpoint of its partner has a backlog beyond the share",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* emptyQueue
          const partner = newId()
          const backlog = yield* dueAttempts(partner, 12, 10)
          const [probe] = yield* dueAttempts(partner, 1, 1)
          yield* sql`
            INSERT INTO webhook_endpoint_failures (endpoint_id, partner_id, failing_since)
            SELECT endpoint_id, partner_id, now() FROM webhook_deliveries WHERE id = ${probe ?? ""}`
          const claimed = (yield* claim(10, 4)).map((row) => row.id)
          expect(claimed).toHaveLength(4)
          expect(claimed).toContain(probe)
          expect(claimed.filter((id) => backlog.includes(id))).toHaveLength(3)
        }),
    )

    it.effect(
      "take turns over time too: one slot freed at a time, no endpoint is starved by another's backlog",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const endpointOf = (id: string | undefined) =>
            Effect.map(
              sql<{ endpoint_id: string }>`SELECT endpoint_id FROM webhook_deliveries WHERE id = ${id ?? ""}`,
              (rows) => rows[0]?.endpoint_id ?? "",
            )
          const succeed = (id: string) =>
            sql`UPDATE webhook_deliveries SET status = 'succeeded', attempted_at = now(), next_attempt_at = NULL
              WHERE id = ${id}`
          for (const share of [1, 2]) {
            yield* emptyQueue
            const partner = newId()
            // Healthy endpoints with long backlogs (one per slot), and a failing endpoint due later.
            const healthy = []
            for (let n = 0; n < share; n++)
              healthy.push(yield* endpointOf((yield* dueAttempts(partner, 20, 10 - n))[0]))
            const [probe] = yield* dueAttempts(partner, 1, 1)
            yield* sql`
            INSERT INTO webhook_endpoint_failures (endpoint_id, partner_id, failing_since)
            VALUES (${yield* endpointOf(probe)}, ${partner}, now())`
            const served: Array<string> = []
            const inFlight: Array<string> = []
            for (let round = 0; round < 3 * (share + 1); round++) {
              const claimed = yield* claim(10, share)
              served.push(...claimed.map((row) => row.endpoint_id))
              inFlight.push(...claimed.map((row) => row.id))
              const done = inFlight.shift()
              if (done !== undefined) yield* succeed(done)
            }
            expect(served, `share ${share}`).toContain(yield* endpointOf(probe))
            for (const endpoint of healthy) expect(served, `share ${share}`).toContain(endpoint)
          }
        }),
    )

    it.effect("made at once, as by many dispatchers, still keep a partner within its share", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* emptyQueue
        const busy = newId()
        yield* dueAttempts(busy, 20, 10)
        const claims = yield* Effect.all(
          Array.from({ length: 8 }, () => claim(4, 3)),
          { concurrency: "unbounded" },
        )
        expect(claims.flat()).toHaveLength(3)
        const [leased] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND lease_until > now()`
        expect(leased?.n).toBe(3)
      }),
    )
  })

  describe("the next look", () => {
    it.effect(
      "is not for an attempt of a partner at its share: a dispatcher would wake and claim nothing",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* emptyQueue
          const [busy, quiet] = [newId(), newId()]
          yield* dueAttempts(busy, 2, 10)
          expect(yield* claim(10, 2)).toHaveLength(2)
          // The busy partner's retry falls due in a second, the quiet one's in ten minutes.
          const [soon] = yield* dueAttempts(busy, 1, 0)
          const [later] = yield* dueAttempts(quiet, 1, 0)
          yield* sql`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 second' WHERE id = ${soon ?? ""}`
          yield* sql`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '10 minutes' WHERE id = ${later ?? ""}`

          const atShare = yield* untilNextDue(2)
          expect(atShare === null ? null : Duration.toSeconds(atShare)).toBeGreaterThan(590)
          // With room for one more, the busy partner's retry is the next look.
          const withRoom = yield* untilNextDue(3)
          expect(withRoom === null ? null : Duration.toMillis(withRoom)).toBeLessThanOrEqual(1000)
          // Nothing is due yet: a claim takes nothing, whatever the room.
          expect(yield* claim(10, 8)).toEqual([])
        }),
    )
  })

  it.scoped("a claim that cannot get the claims' lock in time claims nothing instead of waiting on", () =>
    Effect.gen(function* () {
      yield* emptyQueue
      yield* dueAttempts(newId(), 1, 10)
      // A claim that stalls while it holds the lock (a paused process): held until the test lets it go.
      const letGo = yield* holdClaimsLock
      const given = yield* claimDueDeliveries({
        limit: 4,
        perPartner: 8,
        lease: "60 seconds",
        token: `test/${newId()}`,
        lockTimeout: "200 millis",
      })
      expect(given).toEqual([])
      yield* letGo
      // Once the lock is free, the attempt is claimed as usual.
      expect(yield* claim(4, 8)).toHaveLength(1)
    }),
  )

  it.scoped(
    "a partner whose receiver hangs holds its share; another partner's webhook goes out meanwhile",
    () =>
      Effect.gen(function* () {
        yield* emptyQueue
        // The busy partner's receiver answers nothing until the test ends; the other's at once.
        const hanging = yield* startReceiver(() => ({ hang: true }))
        const answering = yield* startReceiver()
        const [busy, quiet] = [newId(), newId()]
        yield* createEndpoint(busy, { url: hanging.url() })
        yield* createEndpoint(quiet, { url: answering.url() })
        for (let n = 0; n < 10; n++) yield* publishEvent(busy)
        yield* Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" }))
        yield* Effect.forkScoped(
          runWebhookDispatcher({
            allowPrivateTargets: true,
            pollInterval: "200 millis",
            concurrency: 4,
            perPartnerConcurrency: 2,
            // Far longer than the test: every attempt sent to the hanging receiver stays in flight.
            sendTimeout: "60 seconds",
            lease: "90 seconds",
          }),
        )
        yield* eventually(
          Effect.sync(() => hanging.received.length),
          (n) => n === 2,
        )
        const event = yield* publishEvent(quiet)
        yield* eventually(
          Effect.sync(() => answering.withId(event)),
          (received) => received.length === 1,
        )
        // Still two of the busy partner's in flight, no more, though two more slots were free.
        expect(hanging.received).toHaveLength(2)
      }),
  )

  it.scoped(
    "endpoints whose receivers hang hold half their partner's slots at most; its other endpoint gets the rest",
    () =>
      Effect.gen(function* () {
        yield* emptyQueue
        const hanging = yield* startReceiver(() => ({ hang: true }))
        const answering = yield* startReceiver()
        const partner = newId()
        // As many hanging endpoints as the partner's share (2), each with a backlog; then an endpoint that
        // answers, and one event for all three.
        yield* createEndpoint(partner, { url: hanging.url("/a") })
        yield* createEndpoint(partner, { url: hanging.url("/b") })
        for (let n = 0; n < 10; n++) yield* publishEvent(partner)
        yield* Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" }))
        yield* eventually(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) => sql<{ n: number }>`
            SELECT count(*)::int AS n FROM webhook_deliveries WHERE partner_id = ${partner}`,
          ),
          (rows) => rows[0]?.n === 20,
        )
        yield* createEndpoint(partner, { url: answering.url() })
        const event = yield* publishEvent(partner)
        yield* Effect.forkScoped(
          runWebhookDispatcher({
            allowPrivateTargets: true,
            pollInterval: "100 millis",
            concurrency: 4,
            perPartnerConcurrency: 2,
            // Short, so that the hanging endpoints' first attempts fail soon and they count as failing.
            sendTimeout: "300 millis",
            lease: "30 seconds",
            retrySchedule: [0, 3600],
          }),
        )
        yield* eventually(
          Effect.sync(() => answering.withId(event)),
          (received) => received.length === 1,
        )
        // Its turn came after the hanging endpoints' first attempts and a probe or two, not after their
        // backlogs: the failing ones come after it and together hold one of the two slots.
        expect(hanging.received.length).toBeLessThanOrEqual(4)
      }),
  )
})

import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { isLockNotAvailable } from "../database/sql-state.js"
import { recordLapsedAttempts } from "./cut-off-attempts.js"

/** How long a claim waits for the claims' lock before it gives up and claims nothing this time. */
export const CLAIM_LOCK_TIMEOUT_MS = 5_000

/** A due attempt as a dispatcher claimed it, with everything needed to make it. */
export interface ClaimedDelivery {
  readonly id: string
  readonly partner_id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly attempt: number
  /** The retry schedule's entry this attempt stands at (its attempt number, less the cut-off ones before it). */
  readonly schedule_step: number
  /** The claim's token, in `leased_by`: only its holder records the attempt. */
  readonly leased_by: string
  readonly event_type: string
  readonly occurred_at: Date
  readonly data: Readonly<Record<string, unknown>>
  /** Null when the endpoint was deleted. */
  readonly url: string | null
  readonly enabled: boolean | null
  /** The endpoint's current secret. */
  readonly secret: string | null
  /** The secret the last rotation replaced while its grace period lasts (none or one: the domain keeps one). */
  readonly previous_secrets: ReadonlyArray<string>
  /** The database's clock at the claim: when the attempt is made. */
  readonly claimed_at: Date
}

// Every claim, in every process, takes this lock for its transaction: a claim counts each partner's attempts
// in flight, and two claims counting at once would each see room for the same share. The wait for it is
// bounded (set_config runs first, for this transaction only): a holder that stalls between its lock and its
// commit (a paused process, a cut network) would otherwise stop every dispatcher until its session ends.
const claimLock = (timeoutMs: number) => `
  SELECT set_config('lock_timeout', '${Math.max(1, Math.round(timeoutMs))}ms', true) AS lock_timeout,
         pg_advisory_xact_lock(hashtextextended('webhook-dispatch:claims', 0)) AS locked`

/** The most lapsed attempts a claim records before it claims: the rest are recorded by the next claims. */
const LAPSED_PER_CLAIM = 100

/**
 * Claims at most `limit` due pending attempts for `lease`, shared fairly between partners: every partner's
 * first due attempt comes before anyone's second (counting the attempts it has in flight already), and no
 * partner has more than `perPartner` in flight at once, across every dispatcher. Within a partner its
 * endpoints take turns the same way, and an endpoint that is failing (no success since its last failure)
 * has one attempt in flight at most; failing endpoints hold half the partner's share at most together, and at
 * the same turn the endpoint served longest ago goes first, so each kind keeps slots of its own over time. So a partner with a backlog or slow receivers takes its share, never
 * every slot, and another partner's webhook is claimed as soon as one is free; and a receiver that hangs
 * holds one of its partner's slots once its first attempt has failed, not the partner's whole share, while
 * the partner's other endpoints get theirs. An attempt stays claimed only until its lease runs out, so a
 * dispatcher that died releases its attempts by doing nothing (they count as in flight until then; the claim
 * after that records each as cut off, its outcome unknown, and claims its next attempt, made at once). Claims
 * take turns (one lock; a claim that waits for it longer than CLAIM_LOCK_TIMEOUT_MS claims nothing); rows
 * another transaction holds are skipped, not waited for. Committed at once: the row locks last only for the
 * claim, the lease keeps the attempt after. Its cost grows with the number of endpoints that have pending
 * attempts (one index descent each; a few more for one with attempts due).
 */
export const claimDueDeliveries = (options: {
  readonly limit: number
  readonly perPartner: number
  readonly lease: Duration.DurationInput
  readonly token: string
  /** How long to wait for the claims' lock (CLAIM_LOCK_TIMEOUT_MS by default). */
  readonly lockTimeout?: Duration.DurationInput
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    // Attempts whose lease ran out unrecorded are recorded first, each as an attempt of its own, so that what
    // is claimed of them is their next attempt.
    Effect.zipRight(
      recordLapsedAttempts({ limit: LAPSED_PER_CLAIM }),
      sql.withTransaction(
        Effect.zipRight(
          sql.unsafe(
            claimLock(
              options.lockTimeout === undefined
                ? CLAIM_LOCK_TIMEOUT_MS
                : Duration.toMillis(Duration.decode(options.lockTimeout)),
            ),
          ),
          // After the lock, in its own statement: its snapshot sees the leases of every claim before it.
          sql<ClaimedDelivery>`
          WITH RECURSIVE pending_endpoints AS (
            -- Each endpoint with a pending attempt, and its earliest (one index descent each): an endpoint
            -- whose earliest is not due yet has nothing due, and costs nothing more.
            (SELECT partner_id, endpoint_id, next_attempt_at AS earliest FROM webhook_deliveries
             WHERE status = 'pending' ORDER BY partner_id, endpoint_id, next_attempt_at LIMIT 1)
            UNION ALL
            SELECT following.partner_id, following.endpoint_id, following.earliest
            FROM pending_endpoints p
            CROSS JOIN LATERAL (
              SELECT d.partner_id, d.endpoint_id, d.next_attempt_at AS earliest FROM webhook_deliveries d
              WHERE d.status = 'pending' AND (d.partner_id, d.endpoint_id) > (p.partner_id, p.endpoint_id)
              ORDER BY d.partner_id, d.endpoint_id, d.next_attempt_at LIMIT 1
            ) following
          ), due_endpoints AS (
            SELECT partner_id, endpoint_id FROM pending_endpoints WHERE earliest <= now()
          ), partners AS (
            SELECT p.partner_id, in_flight.n AS in_flight, in_flight.failing AS failing_in_flight
            FROM (SELECT DISTINCT partner_id FROM due_endpoints) p
            CROSS JOIN LATERAL (
              SELECT count(*) AS n,
                     count(*) FILTER (
                       WHERE EXISTS (SELECT 1 FROM webhook_endpoint_failures f WHERE f.endpoint_id = l.endpoint_id)
                     ) AS failing
              FROM webhook_deliveries l
              WHERE l.partner_id = p.partner_id AND l.status = 'pending' AND l.lease_until > now()
            ) in_flight
            WHERE in_flight.n < ${options.perPartner}
          ), candidates AS (
            -- Each endpoint's due attempts, as many as it has room for: a failing endpoint (no success since
            -- its last failure) one in flight at a time, so a receiver that hangs is probed, not flooded.
            SELECT due.id, due.next_attempt_at, e.partner_id, endpoint.failing,
                   endpoint.in_flight + due.n AS endpoint_turn,
                   (SELECT t.last_claimed_at FROM webhook_endpoint_turns t WHERE t.endpoint_id = e.endpoint_id)
                     AS last_served
            FROM due_endpoints e
            JOIN partners USING (partner_id)
            CROSS JOIN LATERAL (
              SELECT count(l.id) AS in_flight, failing.yes AS failing,
                     CASE WHEN failing.yes THEN 1 ELSE ${options.perPartner} END AS share
              FROM (SELECT EXISTS (SELECT 1 FROM webhook_endpoint_failures f WHERE f.endpoint_id = e.endpoint_id) AS yes) failing
              LEFT JOIN webhook_deliveries l
                ON l.partner_id = e.partner_id AND l.endpoint_id = e.endpoint_id
                AND l.status = 'pending' AND l.lease_until > now()
              GROUP BY failing.yes
            ) endpoint
            CROSS JOIN LATERAL (
              SELECT d.id, d.next_attempt_at, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS n
              FROM webhook_deliveries d
              WHERE d.partner_id = e.partner_id AND d.endpoint_id = e.endpoint_id AND d.status = 'pending'
                AND d.next_attempt_at <= now() AND d.lease_until IS NULL
              ORDER BY d.next_attempt_at, d.id
              LIMIT least(greatest(endpoint.share - endpoint.in_flight, 0), ${options.perPartner} - partners.in_flight,
                          ${options.limit})
            ) due
          ), capped AS (
            -- Failing endpoints hold half the partner's share at most together (one slot when it is one or
            -- two), so however many of them hang, the partner's other endpoints keep slots of their own.
            SELECT c.*
            FROM (
              SELECT c.*, p.failing_in_flight + row_number() OVER (
                       PARTITION BY c.partner_id
                       ORDER BY c.endpoint_turn, c.last_served NULLS FIRST, c.next_attempt_at, c.id) AS failing_turn
              FROM candidates c JOIN partners p USING (partner_id)
              WHERE c.failing
            ) c
            WHERE c.failing_turn <= greatest(${options.perPartner} / 2, 1)
            UNION ALL
            SELECT c.*, NULL FROM candidates c WHERE NOT c.failing
          ), turns AS (
            -- A partner's endpoints take turns (each one's first before any one's second, an endpoint's
            -- attempts in flight counting as its turns taken; at the same turn the one served longest ago
            -- first, so that they also take turns over time, one freed slot after another), and so do partners.
            SELECT c.id, c.next_attempt_at,
                   p.in_flight + row_number() OVER (
                     PARTITION BY c.partner_id
                     ORDER BY c.endpoint_turn, c.last_served NULLS FIRST, c.next_attempt_at, c.id) AS turn
            FROM capped c JOIN partners p USING (partner_id)
          ), chosen AS (
            SELECT id FROM turns WHERE turn <= ${options.perPartner}
            ORDER BY turn, next_attempt_at, id LIMIT ${options.limit}
          ), due AS (
            SELECT d.id FROM webhook_deliveries d JOIN chosen ON chosen.id = d.id
            WHERE d.status = 'pending' AND d.lease_until IS NULL
            FOR UPDATE OF d SKIP LOCKED
          ), claimed AS (
            UPDATE webhook_deliveries d
            SET lease_until = now() + ${Duration.toMillis(Duration.decode(options.lease))} * interval '1 millisecond',
                leased_by = ${options.token}, claimed_at = now()
            FROM due WHERE d.id = due.id
            RETURNING d.id, d.partner_id, d.endpoint_id, d.event_id, d.attempt, d.leased_by, d.next_attempt_at,
                      coalesce(d.schedule_step, d.attempt) AS schedule_step
          ), served AS (
            INSERT INTO webhook_endpoint_turns (endpoint_id, last_claimed_at)
            SELECT DISTINCT endpoint_id, now() FROM claimed
            ON CONFLICT (endpoint_id) DO UPDATE SET last_claimed_at = excluded.last_claimed_at
          )
          SELECT c.id, c.partner_id, c.endpoint_id, c.event_id, c.attempt, c.schedule_step, c.leased_by,
                 pe.type AS event_type, pe.occurred_at, pe.data,
                 e.url, e.enabled, s.secret,
                 ARRAY(SELECT p.secret
                       FROM jsonb_array_elements(e.previous_secrets) WITH ORDINALITY AS previous(item, n)
                       JOIN webhook_signing_secrets p
                         ON p.id = (previous.item ->> 'id')::uuid AND p.partner_id = c.partner_id
                       WHERE (previous.item ->> 'valid_until')::timestamptz > now()
                       ORDER BY previous.n) AS previous_secrets,
                 now() AS claimed_at
          FROM claimed c
          JOIN public_events pe ON pe.id = c.event_id
          LEFT JOIN webhook_endpoints e ON e.id = c.endpoint_id AND e.partner_id = c.partner_id
          LEFT JOIN webhook_signing_secrets s ON s.id = e.secret_id AND s.partner_id = c.partner_id
          ORDER BY c.next_attempt_at, c.id`,
        ),
      ),
    ),
  ).pipe(
    Effect.catchIf(isLockNotAvailable, () =>
      Effect.as(Effect.logWarning("webhook claim gave up waiting for the claims' lock"), []),
    ),
  )

// How many of the attempts falling due next a dispatcher looks at for one of a partner with room.
const LOOK_AHEAD = 32

/**
 * How long until the next pending attempt that is not due yet falls due, of a partner with fewer than
 * `perPartner` attempts in flight, or null when none of the next LOOK_AHEAD is: a dispatcher that claimed all
 * it could sleeps that long (at most its poll interval). Attempts of partners at their share are left out, or
 * a dispatcher would wake for each of them and claim nothing; one of theirs ending wakes the dispatcher that
 * made it, and the poll interval covers the rest (those another one made, leases that ran out).
 */
export const untilNextDue = (perPartner: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ wait_ms: number }>`
        SELECT (EXTRACT(EPOCH FROM (next.next_attempt_at - now())) * 1000)::float8 AS wait_ms
        FROM (
          SELECT partner_id, next_attempt_at FROM webhook_deliveries
          WHERE status = 'pending' AND next_attempt_at > now() AND lease_until IS NULL
          ORDER BY next_attempt_at LIMIT ${LOOK_AHEAD}
        ) next
        WHERE (SELECT count(*) FROM webhook_deliveries l
               WHERE l.partner_id = next.partner_id AND l.status = 'pending' AND l.lease_until > now())
              < ${perPartner}
        ORDER BY next.next_attempt_at LIMIT 1`,
      (rows) => (rows[0] === undefined ? null : Duration.millis(Math.max(0, rows[0].wait_ms))),
    ),
  )

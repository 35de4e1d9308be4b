import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { gcraOf, type RateLimitPolicy } from "./rate-limit-policy.js"

/** A rate limit decision, with what the RateLimit, RateLimit-Policy and Retry-After headers report. */
export interface RateLimitDecision {
  /** Whether the request may run; a refused one consumed nothing. */
  readonly allowed: boolean
  /** The policy's quota: its burst. */
  readonly limit: number
  /** Requests still allowed at once after this one (0 when refused). */
  readonly remaining: number
  /** Whole seconds, rounded up, until the full burst is available again. */
  readonly resetSeconds: number
  /** Whole seconds, rounded up, until a request would be allowed (0 when this one was). */
  readonly retryAfterSeconds: number
}

// GCRA (the generic cell rate algorithm, a token bucket kept as one timestamp): the key's `tat` runs ahead of
// the clock by the requests not yet "paid back" at the sustained rate. A request advances it by one emission
// interval from max(tat, now), and is allowed if it then runs at most the burst tolerance ahead of now.
// Deciding and writing is one upsert, so concurrent requests from any number of API processes queue on the
// row lock and each decides on the state the previous one left. The clock is the database's
// (clock_timestamp, read once in the CTE: a volatile CTE is evaluated once), so every process shares it; it
// is read before the statement queues on the row, so each decision takes the later of it and the key's
// previous decision (`decided_at`): a key's clock never runs backwards. A refused request writes the row back
// with the same `tat`: it consumes nothing. The backlog is reported against the time the request was decided at.
const statement = `
  WITH clock AS (SELECT clock_timestamp() AS now),
  decided AS (
    INSERT INTO rate_limits AS bucket (key, tat, last_allowed, decided_at)
    SELECT $1, clock.now + $2 * interval '1 microsecond', true, clock.now FROM clock
    ON CONFLICT (key) DO UPDATE SET
      tat = CASE
        WHEN greatest(bucket.tat, (SELECT now FROM clock), bucket.decided_at) + $2 * interval '1 microsecond'
             <= greatest((SELECT now FROM clock), bucket.decided_at) + $3 * interval '1 microsecond'
        THEN greatest(bucket.tat, (SELECT now FROM clock), bucket.decided_at) + $2 * interval '1 microsecond'
        ELSE bucket.tat
      END,
      last_allowed = greatest(bucket.tat, (SELECT now FROM clock), bucket.decided_at) + $2 * interval '1 microsecond'
                     <= greatest((SELECT now FROM clock), bucket.decided_at) + $3 * interval '1 microsecond',
      decided_at = greatest((SELECT now FROM clock), bucket.decided_at)
    RETURNING tat, last_allowed, decided_at
  )
  SELECT decided.last_allowed AS allowed,
         (extract(epoch FROM decided.tat - decided.decided_at) * 1000000)::bigint::text AS backlog_micros
  FROM decided`

const ceilSeconds = (micros: number) => Math.max(0, Math.ceil(micros / 1_000_000))

/**
 * Takes `cells` requests at once from `key`'s bucket (all or none), in one statement on the database clock:
 * whether they were allowed, and how far the key's state then runs ahead of the clock.
 */
export const consumeRateLimitCells = (key: string, policy: RateLimitPolicy, cells: number) =>
  Effect.gen(function* () {
    // A bad policy is a configuration bug (settings are validated at start): a defect, not an error.
    const { emissionMicros, toleranceMicros } = yield* Effect.sync(() => gcraOf(policy))
    if (!(Number.isSafeInteger(cells) && cells >= 1)) {
      return yield* Effect.dieMessage(`rate limit: cells must be a positive integer, got ${cells}`)
    }
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ allowed: boolean; backlog_micros: string }>(statement, [
      key,
      emissionMicros * cells,
      toleranceMicros,
    ])
    const row = rows[0]
    if (row === undefined) {
      return yield* Effect.dieMessage("rate limit: the upsert returned no row")
    }
    return { allowed: row.allowed, backlogMicros: Number(row.backlog_micros) }
  })

/**
 * The decision of one request of a key under `policy`, from how far the key's state ran ahead of the database
 * clock right after it (when allowed) or after the requests before it (when refused).
 */
export const rateLimitDecisionOf = (
  policy: RateLimitPolicy,
  allowed: boolean,
  backlogMicros: number,
): RateLimitDecision => {
  const { emissionMicros, toleranceMicros } = gcraOf(policy)
  return {
    allowed,
    limit: policy.burst,
    remaining: allowed ? Math.floor((toleranceMicros - backlogMicros) / emissionMicros) : 0,
    resetSeconds: ceilSeconds(backlogMicros),
    retryAfterSeconds: allowed ? 0 : ceilSeconds(backlogMicros + emissionMicros - toleranceMicros),
  }
}

/**
 * Takes one request from `key`'s bucket under `policy`, atomically in one statement shared by every process
 * on the database: allowed while the burst lasts, then at the sustained rate. Run it outside a transaction
 * (a transaction would hold the key's row lock, and every request of the key with it, until it ends).
 */
export const consumeRateLimit = (key: string, policy: RateLimitPolicy) =>
  Effect.map(consumeRateLimitCells(key, policy, 1), ({ allowed, backlogMicros }) =>
    rateLimitDecisionOf(policy, allowed, backlogMicros),
  )

// Gives one cell back: the key's `tat` moves back by one emission interval, never behind the key's clock (a
// bucket holds at most its burst). Other requests may have taken cells meanwhile: cells are alike, so the
// bucket ends as if the one given back had never been taken.
const giveBackStatement = `
  WITH clock AS (SELECT clock_timestamp() AS now)
  UPDATE rate_limits AS bucket SET
    tat = greatest(bucket.tat - $2 * interval '1 microsecond', (SELECT now FROM clock), bucket.decided_at),
    decided_at = greatest((SELECT now FROM clock), bucket.decided_at)
  WHERE bucket.key = $1
  RETURNING (extract(epoch FROM bucket.tat - bucket.decided_at) * 1000000)::bigint::text AS backlog_micros`

/**
 * Gives back the cell an allowed request took from `key`'s bucket under `policy` (a later check refused the
 * request, which so ran nothing), in one statement: the bucket's state after it, as an allowed decision.
 */
export const giveBackRateLimitCell = (key: string, policy: RateLimitPolicy) =>
  Effect.gen(function* () {
    const { emissionMicros } = yield* Effect.sync(() => gcraOf(policy))
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ backlog_micros: string }>(giveBackStatement, [key, emissionMicros])
    // No row: the bucket refilled and was reaped meanwhile (reapIdleRateLimits), which is a full bucket.
    return rateLimitDecisionOf(policy, true, rows[0] === undefined ? 0 : Number(rows[0].backlog_micros))
  })

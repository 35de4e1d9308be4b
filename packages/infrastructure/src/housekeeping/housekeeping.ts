import type { SqlClient, SqlError } from "@effect/sql"
import { Duration, Effect, Layer, Schedule } from "effect"
import { reapExpiredTokens } from "../auth/reap-expired-tokens.js"
import { reapAllExpiredKeys } from "../idempotency/reap-expired-keys.js"
import { reapIdleRateLimits } from "../rate-limit/reap-idle-rate-limits.js"

/** What one sweep deleted. */
export interface SweepResult {
  readonly idempotencyKeys: number
  readonly accessTokens: number
  readonly rateLimits: number
}

/**
 * One housekeeping sweep: idempotency keys past their lifetime (and lease), access tokens a day past their
 * expiry, rate-limit rows of idle keys, each in bounded batches that never wait on a row in use.
 */
export const sweepOnce: Effect.Effect<SweepResult, SqlError.SqlError, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const idempotencyKeys = yield* reapAllExpiredKeys()
    const accessTokens = yield* reapExpiredTokens()
    const rateLimits = yield* reapIdleRateLimits()
    return { idempotencyKeys, accessTokens, rateLimits }
  },
)

/**
 * Runs sweepOnce every `interval` (jittered, so that several processes spread out; sweeps are safe beside each
 * other), the first one an interval after start, for as long as the layer lives; a failed sweep is logged and
 * the next one runs on time. Without it the keys, tokens and rate-limit rows of every request ever made would
 * stay in their tables.
 */
export const housekeepingLayer = (interval: Duration.DurationInput) => {
  const sweep = sweepOnce.pipe(
    Effect.tap((swept) =>
      swept.idempotencyKeys + swept.accessTokens + swept.rateLimits > 0
        ? Effect.logInfo("housekeeping swept expired rows", swept)
        : Effect.void,
    ),
    Effect.catchAllCause((cause) =>
      Effect.logWarning("housekeeping sweep failed; the next one runs on time", cause),
    ),
  )
  return Layer.scopedDiscard(
    Effect.forkScoped(
      sweep.pipe(
        Effect.delay(interval),
        Effect.repeat(Schedule.spaced(Duration.decode(interval)).pipe(Schedule.jittered)),
      ),
    ),
  )
}

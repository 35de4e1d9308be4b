import { SqlClient } from "@effect/sql"
import { InvariantViolation } from "@points/domain"
import { Effect } from "effect"

// The domain's ExpireKey rule in SQL, on the database's clock: a key's lifetime is over, and so is the lease
// of a claim still on it (a request within its lease may be executing, and its key lives until it finishes).
const expired = "expires_at <= now() AND (lease_expires_at IS NULL OR lease_expires_at <= now())"

// SKIP LOCKED leaves a key that a claim or a recording holds right now to a later pass, and lets several
// reapers share the work. The condition is checked again on the row as deleted, so a key claimed anew between
// the two (a new lifetime) is never deleted. `ctid = ANY(ARRAY(...))` rather than `ctid IN (SELECT ...)`: with
// the recheck beside it, the planner turns IN into a hash join over every expired key, while ANY(ARRAY(...))
// stays a TID scan of the batch alone, so a batch costs the same however many keys are due.
const deleteBatch = `
  WITH reaped AS (
    DELETE FROM idempotency_keys
    WHERE ctid = ANY(ARRAY(SELECT ctid FROM idempotency_keys WHERE ${expired} LIMIT $1 FOR UPDATE SKIP LOCKED))
      AND ${expired}
    RETURNING 1
  )
  SELECT count(*)::int AS reaped FROM reaped`

/** The most keys one batch deletes unless told otherwise: short transactions, short row locks. */
export const DEFAULT_REAP_BATCH_SIZE = 1000

/** How many batches one call of reapAllExpiredKeys runs at most, so one call's duration is bounded. */
export const DEFAULT_MAX_REAP_BATCHES = 100

/**
 * Deletes at most `batchSize` keys whose lifetime (and lease, when claimed) has ended, in one statement of its
 * own, and returns how many it deleted. A deleted key is unknown again: a request with it executes anew.
 */
export const reapExpiredKeys = (options: { readonly batchSize: number }) =>
  Effect.gen(function* () {
    if (!Number.isInteger(options.batchSize) || options.batchSize < 1) {
      return yield* Effect.die(new InvariantViolation(`a reap batch of ${options.batchSize} keys`))
    }
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ reaped: number }>(deleteBatch, [options.batchSize])
    return rows[0]?.reaped ?? 0
  }).pipe(Effect.withSpan("idempotency.reapExpiredKeys"))

/**
 * Reaps expired keys batch after batch until a batch comes back short (nothing left) or `maxBatches` ran;
 * returns how many keys it deleted in all. A sweeper calls it on a schedule.
 */
export const reapAllExpiredKeys = (
  options: { readonly batchSize?: number; readonly maxBatches?: number } = {},
) =>
  Effect.gen(function* () {
    const batchSize = options.batchSize ?? DEFAULT_REAP_BATCH_SIZE
    const maxBatches = options.maxBatches ?? DEFAULT_MAX_REAP_BATCHES
    let total = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const reaped = yield* reapExpiredKeys({ batchSize })
      total += reaped
      if (reaped < batchSize) break
    }
    return total
  })

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// A key whose `tat` has passed has its whole burst again: its row says what no row says, so it can go. SKIP
// LOCKED leaves a row a request is deciding on right now to a later pass; the condition is checked again on
// the row as deleted. A request after the delete inserts the row anew, deciding exactly as it would have.
const deleteBatch = `
  WITH reaped AS (
    DELETE FROM rate_limits
    WHERE key = ANY(ARRAY(SELECT key FROM rate_limits WHERE tat <= clock_timestamp() LIMIT $1 FOR UPDATE SKIP LOCKED))
      AND tat <= clock_timestamp()
    RETURNING 1
  )
  SELECT count(*)::int AS reaped FROM reaped`

/**
 * Deletes the rate-limit rows of idle keys (whose bucket is full again), `batchSize` per statement, until a
 * batch comes back short or `maxBatches` ran; returns how many it deleted. Without it every key ever seen
 * (a client id guessed at the token endpoint included) would keep its row forever.
 */
export const reapIdleRateLimits = (
  options: { readonly batchSize?: number; readonly maxBatches?: number } = {},
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const batchSize = options.batchSize ?? 1000
    const maxBatches = options.maxBatches ?? 100
    let total = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const rows = yield* sql.unsafe<{ reaped: number }>(deleteBatch, [batchSize])
      const reaped = rows[0]?.reaped ?? 0
      total += reaped
      if (reaped < batchSize) break
    }
    return total
  })

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** How expired tokens are deleted: in batches, a bounded number of them per call. */
export interface ReapTokensOptions {
  /** Rows per DELETE (default 1000). */
  readonly batchSize?: number
  /** DELETEs per call at most (default 100); the next call goes on. */
  readonly maxBatches?: number
  /** How long after expiry a token is kept, so logs can still say it expired (default one day). */
  readonly keepSeconds?: number
}

/**
 * Deletes tokens that expired more than `keepSeconds` ago, in bounded batches (SKIP LOCKED: two reapers never
 * wait on each other). Every token row is garbage once expired, so the table holds at most a day of tokens.
 * Returns how many were deleted.
 */
export const reapExpiredTokens = (options: ReapTokensOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const batchSize = options.batchSize ?? 1000
    const maxBatches = options.maxBatches ?? 100
    const keepSeconds = options.keepSeconds ?? 86_400
    let deleted = 0
    for (let batch = 0; batch < maxBatches; batch++) {
      const rows = yield* sql<{ token_id: string }>`
        DELETE FROM access_tokens WHERE token_hash IN (
          SELECT token_hash FROM access_tokens
          WHERE expires_at < now() - make_interval(secs => ${keepSeconds})
          LIMIT ${batchSize} FOR UPDATE SKIP LOCKED)
        RETURNING token_id`
      deleted += rows.length
      if (rows.length < batchSize) break
    }
    return deleted
  })

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { LogCheckpoint } from "../event-store/recorded-event.js"

/**
 * Moves a consumer's checkpoint forward to `to`, in the caller's transaction. A checkpoint only ever moves
 * forward; an update that would not is a broken invariant and dies.
 */
export const storeCheckpoint = (consumer: string, to: LogCheckpoint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const transactionId = String(to.transactionId)
    const globalPosition = String(to.globalPosition)
    const rows = yield* sql`
      UPDATE consumer_checkpoints
      SET transaction_id = ${transactionId}::xid8, global_position = ${globalPosition}::bigint,
          updated_at = now()
      WHERE consumer = ${consumer}
        AND (transaction_id, global_position) < (${transactionId}::xid8, ${globalPosition}::bigint)
      RETURNING consumer`
    if (rows.length !== 1) {
      return yield* Effect.dieMessage(
        `consumer ${consumer}: checkpoint would not move forward to (${transactionId}, ${globalPosition})`,
      )
    }
  })

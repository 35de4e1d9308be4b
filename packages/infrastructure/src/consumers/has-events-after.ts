import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { LogCheckpoint } from "../event-store/recorded-event.js"

/**
 * Whether any committed event lies after `checkpoint`: one readAllAfter may read now, or one it still hides
 * because an older transaction (any one on the server, a writer or not, another consumer's batch too) was
 * open when it looked. A consumer that finds some after a short batch looks again soon rather than at its
 * next poll: the end of that older transaction sends no NOTIFY.
 */
export const hasEventsAfter = (checkpoint: LogCheckpoint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ found: boolean }>`
      SELECT EXISTS (
        SELECT 1 FROM events
        WHERE (transaction_id, global_position)
              > (${String(checkpoint.transactionId)}::xid8, ${String(checkpoint.globalPosition)}::bigint)
      ) AS found`
    return rows[0]?.found === true
  })

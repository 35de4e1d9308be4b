import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { LogCheckpoint } from "../event-store/recorded-event.js"

/**
 * The first event after a place in the log, in commit order. Not `SELECT EXISTS (...)`: PostgreSQL plans that
 * as a sequential scan that stops at the first match, which is the whole table when nothing matches (a
 * caught-up consumer, the usual case): 150 ms at 760,000 events, and growing. Ordered by the index's key with
 * LIMIT 1, it is an index-only scan whatever the table holds.
 */
export const FIRST_EVENT_AFTER = `
  SELECT 1 AS found FROM events
  WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
  ORDER BY transaction_id, global_position
  LIMIT 1`

/**
 * Whether any committed event lies after `checkpoint`: one readAllAfter may read now, or one it still hides
 * because an older transaction (any one on the server, a writer or not, another consumer's batch too) was
 * open when it looked. A consumer that finds some after a short batch looks again soon rather than at its
 * next poll: the end of that older transaction sends no NOTIFY.
 */
export const hasEventsAfter = (checkpoint: LogCheckpoint) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ found: number }>(FIRST_EVENT_AFTER, [
      String(checkpoint.transactionId),
      String(checkpoint.globalPosition),
    ])
    return rows.length > 0
  })

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { logStart } from "../event-store/recorded-event.js"
import { type CheckpointRow, checkpointOf } from "./checkpoint-row.js"

/**
 * The last event committed so far, in commit order (the start of the log when it is empty). ORDER BY names
 * the table's columns: a bare `transaction_id` would sort by the text output column ("998" after "1032").
 */
export const readLogHead = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<CheckpointRow>`
    SELECT transaction_id::text AS transaction_id, global_position::text AS global_position
    FROM events ORDER BY events.transaction_id DESC, events.global_position DESC LIMIT 1`
  return rows[0] === undefined ? logStart : checkpointOf(rows[0])
})

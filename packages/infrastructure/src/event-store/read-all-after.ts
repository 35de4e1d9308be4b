import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { decodeEventRow, type EventRow, eventColumns, eventColumnsWith } from "./event-row.js"
import type { LogCheckpoint, RecordedEvent } from "./recorded-event.js"

/** A batch of the global log, and the checkpoint to continue from. */
export interface LogBatch {
  readonly events: ReadonlyArray<RecordedEvent>
  readonly checkpoint: LogCheckpoint
  /** How many events of the log the batch passed, those of types left out included (`limit` at most). */
  readonly scanned: number
}

// Every column but the payload, which only the events of the wanted types fetch: the others are passed by
// their place in the log alone, never sent nor decoded.
const columnsOfWanted = eventColumnsWith("CASE WHEN event_type = ANY($4::text[]) THEN data END")

/**
 * Reads the global log after a checkpoint, in commit order, at most `limit` events; given `types`, returns
 * only the events of those types (the checkpoint still moves past the others, which are neither fetched
 * whole nor decoded). Positions come from a sequence, so a transaction can commit after one holding a later
 * position; reading by position alone would skip it. Instead the log is read in (transaction id, position)
 * order and only below the snapshot's xmin: every transaction below it has finished, so nothing can still
 * appear behind the checkpoint. A long-running writer delays readers; it never makes them skip. (The
 * technique Emmett and Marten use.) The columns are qualified because the select list renames
 * `transaction_id` to its text form, which would sort "1032" before "998".
 */
export const readAllAfter = (checkpoint: LogCheckpoint, limit: number, types?: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<EventRow>(
      `SELECT ${types === undefined ? eventColumns : columnsOfWanted} FROM events
       WHERE (events.transaction_id, events.global_position) > ($1::text::xid8, $2::bigint)
         AND events.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       ORDER BY events.transaction_id, events.global_position
       LIMIT $3`,
      [
        String(checkpoint.transactionId),
        String(checkpoint.globalPosition),
        limit,
        ...(types === undefined ? [] : [types]),
      ],
    )
    const wanted = types === undefined ? rows : rows.filter((row) => types.includes(row.event_type))
    const events = yield* Effect.forEach(wanted, decodeEventRow)
    const last = rows.at(-1)
    return {
      events,
      checkpoint:
        last === undefined
          ? checkpoint
          : { transactionId: BigInt(last.transaction_id), globalPosition: BigInt(last.global_position) },
      scanned: rows.length,
    } satisfies LogBatch
  })

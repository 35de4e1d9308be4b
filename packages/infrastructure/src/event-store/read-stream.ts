import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { decodeEventRow, type EventRow, eventColumns } from "./event-row.js"
import type { RecordedEvent } from "./recorded-event.js"
import type { StreamId } from "./stream-id.js"

/** A stream as read: its events in order and its version (0 when it does not exist for the partner). */
export interface StreamRead {
  readonly events: ReadonlyArray<RecordedEvent>
  readonly version: bigint
}

/**
 * Reads a partner's stream in order, from the event after version `after` (0: from the start; the version
 * returned is then `after` when nothing follows it). A stream of another partner reads as absent: tenants
 * never see each other's data, not even its existence.
 */
export const readStream = (streamId: StreamId, partnerId: string, after = 0n) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<EventRow>(
      `SELECT ${eventColumns} FROM events WHERE stream_id = $1 AND partner_id = $2 AND stream_version > $3
       ORDER BY stream_version`,
      [streamId, partnerId, String(after)],
    )
    const events = yield* Effect.forEach(rows, decodeEventRow)
    return { events, version: events.at(-1)?.streamVersion ?? after } satisfies StreamRead
  })

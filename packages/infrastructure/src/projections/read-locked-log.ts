import { SqlClient } from "@effect/sql"
import type { EventCatalog } from "@points/domain"
import { Effect, Either, Schema } from "effect"
import type { LogCheckpoint } from "../event-store/recorded-event.js"
import { categories, type StreamId } from "../event-store/stream-id.js"

/**
 * Keeps every writer out of the log until the transaction ends, after waiting for those in flight: from then
 * on every event in the table is committed, and no new one can appear.
 */
export const lockLogAgainstWriters = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`LOCK TABLE events IN SHARE MODE`,
)

/** How many events the log holds. */
export const countEvents = Effect.map(
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ count: string }>`SELECT count(*)::text AS count FROM events`,
  ),
  (rows) => Number(rows[0]?.count ?? 0),
)

/** An event of the log as a rebuild reads it: only what folding needs; no payload for unread categories. */
export interface LogRow {
  readonly global_position: string
  readonly transaction_id: string
  readonly stream_id: StreamId
  readonly stream_version: string
  readonly partner_id: string
  readonly event_type: string
  readonly schema_version: number
  /** Null for a stream of a category the reader did not ask for. */
  readonly data: Record<string, unknown> | null
}

/** The checkpoint just after a row. */
export const checkpointAfter = (row: LogRow): LogCheckpoint => ({
  transactionId: BigInt(row.transaction_id),
  globalPosition: BigInt(row.global_position),
})

/**
 * Reads the log after a checkpoint in commit order, at most `limit` events, for a reader that holds
 * lockLogAgainstWriters, with the payloads of the given categories only (parsing JSON nobody folds is most
 * of a rebuild's reading time for reservation streams). Unlike readAllAfter it does not stop below the oldest
 * transaction still running: that cut-off protects readers running beside writers, but under the lock nothing
 * is in flight, and a rebuild must not stop short at a transaction that is itself waiting for the lock.
 * ORDER BY names the table's columns: a bare name would sort by the text alias of the same name ("1000"
 * before "999"), and the keyset would then skip or repeat events.
 */
export const readLockedLogAfter = (
  checkpoint: LogCheckpoint,
  limit: number,
  payloadsOf: ReadonlyArray<string>,
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<LogRow>(
      `SELECT global_position::text AS global_position, transaction_id::text AS transaction_id, stream_id,
              stream_version::text AS stream_version, partner_id, event_type, schema_version,
              CASE WHEN split_part(stream_id, '-', 1) = ANY($4::text[]) THEN data END AS data
       FROM events
       WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint)
       ORDER BY events.transaction_id, events.global_position
       LIMIT $3`,
      [String(checkpoint.transactionId), String(checkpoint.globalPosition), limit, payloadsOf],
    ),
  )

// Each category's schema decoded synchronously: running one Effect per event through catalog.decode costs
// about half again as much, and a rebuild decodes every event of the log.
const fastDecoders = new Map(
  Object.values(categories).map((catalog) => {
    const events = catalog as unknown as EventCatalog<unknown>
    return [events, Schema.decodeUnknownEither(events.schema)] as const
  }),
)

/**
 * Decodes a row's payload with its category's catalog: synchronously when stored at the current version
 * (the catalog's decode of such a payload is exactly this schema decode), through the catalog's upcasters
 * otherwise. Fails like readStream would on a payload no schema accepts.
 */
export const decodeLogRow = (row: LogRow, catalog: EventCatalog<unknown>) => {
  const data = row.data ?? {}
  if (row.schema_version === catalog.versionOf(row.event_type)) {
    const decode = fastDecoders.get(catalog)
    if (decode !== undefined) {
      const decoded = decode({ ...data, _tag: row.event_type })
      return Either.isRight(decoded) ? Effect.succeed(decoded.right) : Effect.fail(decoded.left)
    }
  }
  return catalog.decode({ type: row.event_type, version: row.schema_version, data })
}

import { SqlClient } from "@effect/sql"
import type { EventCatalog } from "@points/domain"
import { Effect, Either, Schema } from "effect"
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

/** Where the next read starts: after this row's place in the log. */
export const positionAfter = (row: LogRow): bigint => BigInt(row.global_position)

/**
 * Reads the log after a position in log order (global_position), at most `limit` events, for a reader that
 * sees the whole log at once: one that holds lockLogAgainstWriters, or reads in one snapshot. Log order keeps
 * each stream's versions in order (a stream's next event is inserted only after its previous one committed,
 * or in the same transaction), which commit order does not: a transaction's id is taken at its first write,
 * which may come before it waits for a stream's lock, so a stream's later version can carry the smaller
 * transaction id. Only the payloads of the given categories are read (parsing JSON nobody folds is most of a
 * rebuild's reading time for reservation streams). ORDER BY names the table's column: a bare name would sort
 * by the text alias of the same name ("1000" before "999"), and the keyset would then skip or repeat events.
 */
export const readLockedLogAfter = (position: bigint, limit: number, payloadsOf: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<LogRow>(
      `SELECT global_position::text AS global_position, transaction_id::text AS transaction_id, stream_id,
              stream_version::text AS stream_version, partner_id, event_type, schema_version,
              CASE WHEN split_part(stream_id, '-', 1) = ANY($3::text[]) THEN data END AS data
       FROM events
       WHERE events.global_position > $1::bigint
       ORDER BY events.global_position
       LIMIT $2`,
      [String(position), limit, payloadsOf],
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

import { SqlClient } from "@effect/sql"
import { encodeCursor, InvalidParams, InvariantViolation } from "@points/domain"
import { Effect, Option } from "effect"
import { cursorSecret, openCursorSeal, sealForCursor } from "./cursor-seal.js"
import { allOf, decodeCursorPosition, type PageQuery, pageLimit } from "./keyset-page.js"
import type { Page } from "./resources.js"
import {
  compactWritesSeen,
  type WritesSeen,
  writesSeenOf,
  writesSeenOfCompact,
  writesSeenText,
} from "./writes-seen.js"

/**
 * Reads one page of a table by keyset on its uuid key (UUID v7: creation order, oldest first), never skipping
 * a row that commits late. Ids are taken before commit, so a row can become visible after a page that ended
 * beyond its id was read; keyset paging alone would never give it. Each cursor therefore also records which
 * writes the page's read saw (the statement's snapshot), and the next page gives, before the rows after the
 * cursor's, those at or before it whose write the read did not see and that have committed since. The
 * table needs a `transaction_id` column (xid8, `pg_current_xact_id()` of the writing transaction) and an
 * index on it within the scope.
 *
 * A page cut within such late rows ends at its last row, and the next one starts there: rows between it
 * and the previous cursor may then be given twice, never skipped. Clients deduplicate by id, as for
 * webhooks; a cursor without what its read saw (made before this) pages as keyset paging alone does.
 */
export const selectPageOfCommits = <Row extends { readonly seen: string }, A>(
  options: PageQuery<Row, A> & {
    /**
     * A column to order by instead of the key (the transactions' log position, selected in `columns`): the
     * cursor still names its row by key, whose value of the column is looked up within the scope.
     */
    readonly orderBy?: string
  },
) =>
  Effect.gen(function* () {
    const limit = yield* pageLimit(options.request.limit)
    const position =
      options.request.cursor === undefined
        ? null
        : yield* decodeCursorPosition(options.list, options.request.cursor)
    // What the cursor's read saw, opened with the database's key: a token it did not seal for this cursor's
    // list and row is no cursor of ours.
    let seen: WritesSeen | null = null
    if (position?.seen != null) {
      const secret = yield* cursorSecret
      const opened = Option.flatMap(
        openCursorSeal(secret, `${options.list}:${position.key}`, position.seen),
        writesSeenOfCompact,
      )
      if (Option.isNone(opened)) {
        return yield* new InvalidParams({ field: "cursor", problem: "is not a valid cursor" })
      }
      seen = opened.value
    }
    const values: Array<unknown> = []
    const bind = (value: unknown) => {
      values.push(value)
      return `$${values.length}`
    }
    const { table, key, columns } = options
    const order = options.orderBy ?? key
    const scope = allOf(options.scope, bind)
    const filters = allOf(options.filters, bind)
    const branch = (condition: string) =>
      `(SELECT ${columns} FROM ${table} WHERE ${scope} AND ${filters} AND ${condition}
        ORDER BY ${order} LIMIT ${limit + 1})`
    const row = position === null ? null : `${bind(position.key)}::uuid`
    // Where the cursor's row sorts; a row of another partner's is none, and the page empty.
    const after =
      row === null || order === key
        ? row
        : `(SELECT ${order} FROM ${table} WHERE ${key} = ${row} AND ${scope})`
    const branches = [after === null ? branch("TRUE") : branch(`${order} > ${after}`)]
    if (after !== null && seen !== null) {
      // At or before the cursor, written by a transaction the cursor's read did not see. The candidates are
      // taken through (partner_id, transaction_id) first, as the partner's rows written since the read's
      // oldest write in progress, whatever the planner would estimate: by the order key it would walk the
      // whole table. A transaction number this server has not reached yet (a row restored from another
      // server's dump) was not written here since: such a row counts as seen, or it would come back on every
      // page.
      const snapshot = `${bind(writesSeenText(seen))}::pg_snapshot`
      branches.push(
        `(WITH late AS MATERIALIZED (
            SELECT * FROM ${table}
            WHERE ${scope} AND transaction_id >= pg_snapshot_xmin(${snapshot})
              AND transaction_id < pg_snapshot_xmax(pg_current_snapshot()))
          SELECT ${columns} FROM late
          WHERE ${filters} AND ${order} <= ${after} AND NOT pg_visible_in_snapshot(transaction_id, ${snapshot})
          ORDER BY ${order} LIMIT ${limit + 1})`,
      )
    }
    const sql = yield* SqlClient.SqlClient
    // pg_current_snapshot() is the statement's own snapshot (READ COMMITTED): what this read saw.
    const rows = yield* sql.unsafe<Row & object>(
      `SELECT page.*, pg_current_snapshot()::text AS seen
       FROM (${branches.join(" UNION ALL ")}) AS page
       ORDER BY ${order} LIMIT ${limit + 1}`,
      values,
    )
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    if (rows.length <= limit || last === undefined)
      return { data: page.map(options.toResource), next_cursor: null }
    const read = writesSeenOf(last.seen)
    if (Option.isNone(read)) {
      return yield* Effect.die(new InvariantViolation(`a snapshot the cursor cannot hold: ${last.seen}`))
    }
    const lastKey = options.keyOf(last)
    const secret = yield* cursorSecret
    const sealed = sealForCursor(secret, `${options.list}:${lastKey}`, compactWritesSeen(read.value))
    return {
      data: page.map(options.toResource),
      next_cursor: encodeCursor(options.list, lastKey, sealed),
    } satisfies Page<A>
  })

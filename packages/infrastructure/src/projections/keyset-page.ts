import { SqlClient } from "@effect/sql"
import { InvalidParams } from "@points/domain"
import { Effect } from "effect"
import type { Page } from "./resources.js"

/** The page size when the client names none. */
export const DEFAULT_PAGE_LIMIT = 20

/** The largest page a client may ask for. */
export const MAX_PAGE_LIMIT = 100

/** What a list request asks for: how many, and where the previous page ended (its `next_cursor`). */
export interface PageRequest {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

// Any version, lowercase: every key a cursor can carry is one of our ids.
const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** True when the text is a lowercase UUID; anything else names no row, and must not reach a `::uuid` cast. */
export const isUuid = (text: string): boolean => uuidShape.test(text)

/** The opaque cursor of the page after the row with this key. */
export const encodeCursor = (key: string): string => Buffer.from(key, "utf8").toString("base64url")

const invalidCursor = new InvalidParams({ field: "cursor", problem: "is not a valid cursor" })

/** The key a cursor continues after; GH1006 unless it is exactly a cursor this module made. */
export const decodeCursor = (cursor: string): Effect.Effect<string, InvalidParams> => {
  // Bounded before decoding: a cursor is 48 characters; anything much longer is not one.
  if (cursor.length > 64) return Effect.fail(invalidCursor)
  const key = Buffer.from(cursor, "base64url").toString("utf8")
  // Base64 decoding is lenient (it skips bad characters), so only a cursor that re-encodes to itself is ours.
  return isUuid(key) && encodeCursor(key) === cursor ? Effect.succeed(key) : Effect.fail(invalidCursor)
}

/** The page size asked for: 1..100, 20 when absent; GH1006 otherwise. */
export const pageLimit = (limit: number | undefined): Effect.Effect<number, InvalidParams> => {
  if (limit === undefined) return Effect.succeed(DEFAULT_PAGE_LIMIT)
  return Number.isInteger(limit) && limit >= 1 && limit <= MAX_PAGE_LIMIT
    ? Effect.succeed(limit)
    : Effect.fail(
        new InvalidParams({ field: "limit", problem: `must be an integer between 1 and ${MAX_PAGE_LIMIT}` }),
      )
}

/** One filter of a list query: its SQL given the placeholder of its value, or a constant condition. */
export type Filter =
  | { readonly sql: (placeholder: string) => string; readonly value: unknown }
  | { readonly sql: () => string }

/** A filter `column = value`. */
export const equals = (column: string, value: unknown): Filter => ({
  sql: (placeholder) => `${column} = ${placeholder}`,
  value,
})

/** A filter `column = value` on a uuid column: a value that is no UUID names no row (and is never cast). */
export const uuidEquals = (column: string, value: string): Filter =>
  isUuid(value) ? equals(column, value) : { sql: () => "FALSE" }

/** A filter `column = value` on a text column: a value with a NUL names no row (PostgreSQL refuses NUL). */
export const textEquals = (column: string, value: string): Filter =>
  value.includes("\u0000") ? { sql: () => "FALSE" } : equals(column, value)

const toWhere = (filters: ReadonlyArray<Filter>) => {
  const values: Array<unknown> = []
  const conditions = filters.map((filter) => {
    if (!("value" in filter)) return filter.sql()
    values.push(filter.value)
    return filter.sql(`$${values.length}`)
  })
  return { where: conditions.length === 0 ? "TRUE" : conditions.join(" AND "), values }
}

/**
 * Reads one page of a table by keyset on its uuid key (UUID v7, so creation order; newest first when
 * `descending`), or on `orderBy` after the row the cursor names: the rows after it that pass every filter,
 * at most `limit`, and the cursor of the next page when there is more.
 * One row beyond the page is read to know that, so the last page never points to an empty one. `columns`
 * must select `key` as it is: ORDER BY would otherwise sort by an alias of that name.
 */
export const selectPage = <Row, A>(options: {
  readonly table: string
  readonly columns: string
  readonly key: string
  readonly filters: ReadonlyArray<Filter>
  readonly request: PageRequest
  readonly keyOf: (row: Row) => string
  readonly toResource: (row: Row) => A
  readonly descending?: boolean
  /**
   * A column to order by instead of the key (the transactions' log position): the cursor still names the
   * last row by its key, so it says nothing of the column (a log position counts every partner's events).
   */
  readonly orderBy?: string
}) =>
  Effect.gen(function* () {
    const limit = yield* pageLimit(options.request.limit)
    const after = options.request.cursor === undefined ? null : yield* decodeCursor(options.request.cursor)
    const descending = options.descending === true
    const order = options.orderBy ?? options.key
    const filters =
      after === null
        ? options.filters
        : [...options.filters, keyAfter(options.table, options.key, order, after, descending)]
    const { where, values } = toWhere(filters)
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<Row & object>(
      `SELECT ${options.columns} FROM ${options.table}
       WHERE ${where}
       ORDER BY ${order}${descending ? " DESC" : ""} LIMIT ${limit + 1}`,
      values,
    )
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    return {
      data: page.map(options.toResource),
      next_cursor: rows.length > limit && last !== undefined ? encodeCursor(options.keyOf(last)) : null,
    } satisfies Page<A>
  })

const keyAfter = (table: string, key: string, order: string, after: string, descending: boolean): Filter => ({
  sql: (placeholder) =>
    order === key
      ? `${key} ${descending ? "<" : ">"} ${placeholder}::uuid`
      : `${order} ${descending ? "<" : ">"} (SELECT ${order} FROM ${table} WHERE ${key} = ${placeholder}::uuid)`,
  value: after,
})

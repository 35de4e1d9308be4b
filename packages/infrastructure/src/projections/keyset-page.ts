import { SqlClient } from "@effect/sql"
import {
  type CursorList,
  type CursorPosition,
  cursorPosition,
  encodeCursor,
  InvalidParams,
  isUuid,
} from "@points/domain"
import { Effect, Option } from "effect"
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

const invalidCursor = new InvalidParams({ field: "cursor", problem: "is not a valid cursor" })

/** Where a cursor of that list continues; GH1006 unless it is exactly a cursor of that list. */
export const decodeCursorPosition = (
  list: CursorList,
  cursor: string,
): Effect.Effect<CursorPosition, InvalidParams> =>
  Option.match(cursorPosition(list, cursor), {
    onNone: () => Effect.fail(invalidCursor),
    onSome: (position) => Effect.succeed(position),
  })

/** The key a cursor of that list continues after; GH1006 unless it is exactly a cursor of that list. */
export const decodeCursor = (list: CursorList, cursor: string): Effect.Effect<string, InvalidParams> =>
  Effect.map(decodeCursorPosition(list, cursor), (position) => position.key)

/** The page size asked for: 1..100, 20 when absent; GH1006 otherwise. */
export const pageLimit = (limit: number | undefined): Effect.Effect<number, InvalidParams> => {
  if (limit === undefined) return Effect.succeed(DEFAULT_PAGE_LIMIT)
  return Number.isInteger(limit) && limit >= 1 && limit <= MAX_PAGE_LIMIT
    ? Effect.succeed(limit)
    : Effect.fail(
        new InvalidParams({ field: "limit", problem: `must be an integer between 1 and ${MAX_PAGE_LIMIT}` }),
      )
}

/** Adds a value to the statement and gives its placeholder (`$n`). */
export type Bind = (value: unknown) => string

/** One condition of a list query, its values bound as parameters. */
export type Filter = (bind: Bind) => string

/** A filter `column = value`. */
export const equals =
  (column: string, value: unknown): Filter =>
  (bind) =>
    `${column} = ${bind(value)}`

const nothing: Filter = () => "FALSE"

/** A filter `column = value` on a uuid column: a value that is no UUID names no row (and is never cast). */
export const uuidEquals = (column: string, value: string): Filter =>
  isUuid(value) ? equals(column, value) : nothing

/** A filter `column = value` on a text column: a value with a NUL names no row (PostgreSQL refuses NUL). */
export const textEquals = (column: string, value: string): Filter =>
  value.includes("\u0000") ? nothing : equals(column, value)

/** Every filter, joined with AND (TRUE when there is none). */
export const allOf = (filters: ReadonlyArray<Filter>, bind: Bind) =>
  filters.length === 0 ? "TRUE" : filters.map((filter) => filter(bind)).join(" AND ")

/** What a list reads: which table and rows, the client's request, and how a row becomes its resource. */
export interface PageQuery<Row, A> {
  /** The list the cursors name: a cursor of another list is refused. */
  readonly list: CursorList
  readonly table: string
  /** Selected from the table; must include `key` as it is. */
  readonly columns: string
  readonly key: string
  /** What the client asked for, beside `scope`. */
  readonly filters: ReadonlyArray<Filter>
  /** The rows the caller may see at all (its partner's): also where the cursor's row is looked up. */
  readonly scope: ReadonlyArray<Filter>
  readonly request: PageRequest
  readonly keyOf: (row: Row) => string
  readonly toResource: (row: Row) => A
}

/**
 * Reads one page of a table by keyset on its uuid key (UUID v7, so creation order; newest first when
 * `descending`), or on `orderBy` after the row the cursor names: the rows after it that pass every filter,
 * at most `limit`, and the cursor of the next page when there is more.
 * One row beyond the page is read to know that, so the last page never points to an empty one. `columns`
 * must select `key` as it is: ORDER BY would otherwise sort by an alias of that name.
 */
export const selectPage = <Row, A>(
  options: PageQuery<Row, A> & {
    readonly descending?: boolean
    /**
     * A column to order by instead of the key (the transactions' log position): the cursor still names the
     * last row by its key, so it says nothing of the column (a log position counts every partner's events).
     */
    readonly orderBy?: string
  },
) =>
  Effect.gen(function* () {
    const limit = yield* pageLimit(options.request.limit)
    const after =
      options.request.cursor === undefined ? null : yield* decodeCursor(options.list, options.request.cursor)
    const descending = options.descending === true
    const order = options.orderBy ?? options.key
    const filters = [...options.scope, ...options.filters]
    const values: Array<unknown> = []
    const where = allOf(
      after === null ? filters : [...filters, keyAfter(options, order, after, descending)],
      (value) => {
        values.push(value)
        return `$${values.length}`
      },
    )
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
      next_cursor:
        rows.length > limit && last !== undefined ? encodeCursor(options.list, options.keyOf(last)) : null,
    } satisfies Page<A>
  })

// After the cursor's row: by key, or by the order column's value at that row, looked up within the scope
// (a cursor naming a row of another partner starts nowhere: an empty page).
const keyAfter =
  (
    options: { readonly table: string; readonly key: string; readonly scope: ReadonlyArray<Filter> },
    order: string,
    after: string,
    descending: boolean,
  ): Filter =>
  (bind) => {
    const than = descending ? "<" : ">"
    const row = `${bind(after)}::uuid`
    return order === options.key
      ? `${options.key} ${than} ${row}`
      : `${order} ${than} (SELECT ${order} FROM ${options.table} WHERE ${options.key} = ${row} AND ${allOf(options.scope, bind)})`
  }

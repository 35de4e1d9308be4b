import { CONTROL_CHARACTER_CLASS } from "@points/domain"
import { Console, Effect } from "effect"
import { showingSecret } from "./stdout-failure.js"

/** How a command prints: for people (aligned fields, tables) or for machines (`--json`: JSON on stdout only). */
export interface OutputMode {
  readonly json: boolean
}

/** The note printed with every client secret: it exists nowhere else in readable form. */
export const SECRET_NOTE =
  "The client secret is shown only this once and cannot be shown again (only its hash is stored): store it now, e.g. in a secret manager."

// What a name may no longer hold (Label's control characters and direction marks), which a name recorded before
// may: printed as escapes, so that no value forges a line, a colour or the order of what a terminal shows.
const unprintable = new RegExp(CONTROL_CHARACTER_CLASS, "gu")

/** A value as the CLI prints it for people: `-` for none, control characters as `\u{…}` escapes. */
export const printable = (value: string | number | null) =>
  value === null
    ? "-"
    : String(value).replace(unprintable, (character) => `\\u{${character.codePointAt(0)?.toString(16)}}`)

/** Prints a record as aligned `field  value` lines under a title. */
export const printFields = (
  title: string,
  fields: ReadonlyArray<readonly [string, string | number | null]>,
) => {
  const width = Math.max(...fields.map(([name]) => name.length))
  const lines = fields.map(([name, value]) => `  ${name.padEnd(width)}  ${printable(value)}`)
  return Console.log([title, ...lines].join("\n"))
}

/** Prints rows as a table with a header line; an empty list says so. */
export const printTable = (
  columns: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string | number | null>>,
  empty: string,
) => {
  if (rows.length === 0) return Console.log(empty)
  const cells = [columns, ...rows.map((row) => row.map(printable))]
  const widths = columns.map((_, index) => Math.max(...cells.map((row) => (row[index] ?? "").length)))
  const lines = cells.map((row) =>
    row
      .map((cell, index) => cell.padEnd(widths[index] ?? 0))
      .join("  ")
      .trimEnd(),
  )
  return Console.log(lines.join("\n"))
}

/** Prints a value as JSON (machine output). */
export const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** Prints the cursor of the next page, when there is one (people only: JSON carries `next_cursor`). */
export const printNextPage = (nextCursor: string | null) =>
  nextCursor === null ? Effect.void : Console.log(`\nMore: run again with --cursor ${nextCursor}`)

/**
 * Prints a freshly issued secret: with `--json` the JSON goes to stdout and the note to stderr, so the output
 * stays parseable while the person running it still reads the warning.
 */
export const printSecret = (mode: OutputMode, human: Effect.Effect<void>, value: unknown) =>
  Effect.zipRight(
    Effect.sync(showingSecret),
    mode.json
      ? Effect.zipRight(printJson(value), Console.error(SECRET_NOTE))
      : Effect.zipRight(human, Console.log(`\n${SECRET_NOTE}`)),
  )

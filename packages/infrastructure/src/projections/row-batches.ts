import { DateTime, Effect } from "effect"

/** The most rows one multi-row statement writes: bounds the parameter arrays sent in one round trip. */
export const MAX_ROWS_PER_STATEMENT = 10_000

/** Writes rows in statements of at most `size` rows (and at most MAX_ROWS_PER_STATEMENT), in order. */
export const inBatches = <Row, E, R>(
  rows: ReadonlyArray<Row>,
  size: number,
  write: (batch: ReadonlyArray<Row>) => Effect.Effect<unknown, E, R>,
): Effect.Effect<void, E, R> => {
  const step = Math.max(1, Math.min(size, MAX_ROWS_PER_STATEMENT))
  const batches: Array<ReadonlyArray<Row>> = []
  for (let start = 0; start < rows.length; start += step) batches.push(rows.slice(start, start + step))
  return Effect.forEach(batches, write, { discard: true })
}

/** A state's timestamp as a row holds it: ISO-8601 UTC with milliseconds. */
export const isoOf = (at: DateTime.Utc): string => DateTime.formatIso(at)

/** A timestamp as PostgreSQL returned it, as the resources publish it. */
export const isoFromDatabase = (at: Date): string => at.toISOString()

/** A bigint column (the driver returns int8 as a string) as a number; every amount we store is a safe integer. */
export const numberFromDatabase = (value: string | number): number => Number(value)

import { Option } from "effect"

/** The most writes in progress a cursor keeps; a read that saw more is recorded as seeing none of them. */
export const MAX_WRITES_IN_PROGRESS = 32

/**
 * Which writes a page's read saw, as PostgreSQL numbers transactions (its `pg_snapshot`): every one below
 * `before`, none from `upTo` on, and between the two all but those `inProgress`.
 */
export interface WritesSeen {
  readonly before: bigint
  readonly upTo: bigint
  readonly inProgress: ReadonlyArray<bigint>
}

const MAX_TRANSACTION_NUMBER = 2n ** 63n - 1n

/** The `pg_snapshot` text of what a read saw (`before:upTo:inProgress,...`). */
export const writesSeenText = (seen: WritesSeen): string =>
  `${seen.before}:${seen.upTo}:${seen.inProgress.join(",")}`

const number = /^(0|[1-9][0-9]{0,18})$/

/**
 * What a read saw, from its `pg_snapshot` text, when it is one (ascending writes in progress within the
 * range, at most `maxInProgress` of them: as many as a cursor keeps unless said otherwise); none otherwise.
 */
export const writesSeenOf = (
  text: string,
  maxInProgress: number = MAX_WRITES_IN_PROGRESS,
): Option.Option<WritesSeen> => {
  const parts = text.split(":")
  if (parts.length !== 3) return Option.none()
  const [before, upTo, listed] = parts as [string, string, string]
  const items = listed === "" ? [] : listed.split(",")
  if (items.length > maxInProgress) return Option.none()
  if (![before, upTo, ...items].every((item) => number.test(item))) return Option.none()
  const [from, to] = [BigInt(before), BigInt(upTo)]
  const inProgress = items.map(BigInt)
  const ascending = inProgress.every((item, n) => n === 0 || (inProgress[n - 1] ?? 0n) < item)
  const inRange = inProgress.every((item) => item >= from && item < to)
  return from >= 1n && from <= to && to <= MAX_TRANSACTION_NUMBER && ascending && inRange
    ? Option.some({ before: from, upTo: to, inProgress })
    : Option.none()
}

/**
 * What a read saw, as a cursor keeps it: as it is, or, when more writes were in progress than a cursor keeps,
 * as seeing none from `before` on (rows of those writes may then be given again, never skipped).
 */
export const cursorWritesSeen = (seen: WritesSeen): WritesSeen =>
  seen.inProgress.length <= MAX_WRITES_IN_PROGRESS
    ? seen
    : { before: seen.before, upTo: seen.before, inProgress: [] }

import { Option } from "effect"

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

/**
 * The most writes in progress a cursor may list: more than any server has connections (PostgreSQL's
 * `max_connections` is at most 262,143, and ours are 100-300); it only bounds what a forged cursor makes us
 * parse. Every one is kept: a cursor that forgot some would count the rows of its own page as unseen, and
 * could give them again and again.
 */
export const MAX_WRITES_IN_PROGRESS = 262_143

/** The `pg_snapshot` text of what a read saw (`before:upTo:inProgress,...`). */
export const writesSeenText = (seen: WritesSeen): string =>
  `${seen.before}:${seen.upTo}:${seen.inProgress.join(",")}`

const valid = (
  before: bigint,
  upTo: bigint,
  inProgress: ReadonlyArray<bigint>,
): Option.Option<WritesSeen> => {
  const ascending = inProgress.every((item, n) => n === 0 || (inProgress[n - 1] ?? 0n) < item)
  const inRange = inProgress.every((item) => item >= before && item < upTo)
  return before >= 1n && before <= upTo && upTo <= MAX_TRANSACTION_NUMBER && ascending && inRange
    ? Option.some({ before, upTo, inProgress })
    : Option.none()
}

// The three fields of a snapshot's text (`a:b:c,d,...`), each number as `digits` says; none otherwise.
const fieldsOf = (text: string, digits: RegExp) => {
  const parts = text.split(":")
  if (parts.length !== 3) return Option.none()
  const [first, second, listed] = parts as [string, string, string]
  const items = listed === "" ? [] : listed.split(",")
  if (items.length > MAX_WRITES_IN_PROGRESS) return Option.none()
  return [first, second, ...items].every((item) => digits.test(item))
    ? Option.some({ first, second, items })
    : Option.none()
}

const decimal = /^(0|[1-9][0-9]{0,18})$/

/** What a read saw, from PostgreSQL's `pg_snapshot` text, when it is one; none otherwise. */
export const writesSeenOf = (text: string): Option.Option<WritesSeen> =>
  Option.flatMap(fieldsOf(text, decimal), ({ first, second, items }) =>
    valid(BigInt(first), BigInt(second), items.map(BigInt)),
  )

const base36 = /^(0|[1-9a-z][0-9a-z]{0,12})$/

const parse36 = (digits: string) =>
  [...digits].reduce((n, digit) => n * 36n + BigInt(Number.parseInt(digit, 36)), 0n)

/**
 * What a read saw, written short for a cursor: `before`, then `upTo` and each write in progress as its
 * distance from the number before it, in base 36 (writes in progress are close together: a few characters
 * each).
 */
export const compactWritesSeen = (seen: WritesSeen): string => {
  let previous = seen.before
  const steps = seen.inProgress.map((item) => {
    const step = item - previous
    previous = item
    return step.toString(36)
  })
  return `${seen.before.toString(36)}:${(seen.upTo - seen.before).toString(36)}:${steps.join(",")}`
}

/** What a read saw, from its short form (compactWritesSeen), when it is one; none otherwise. */
export const writesSeenOfCompact = (text: string): Option.Option<WritesSeen> =>
  Option.flatMap(fieldsOf(text, base36), ({ first, second, items }) => {
    const from = parse36(first)
    let previous = from
    const inProgress = items.map((step) => {
      previous += parse36(step)
      return previous
    })
    return valid(from, from + parse36(second), inProgress)
  })

import { Either, Encoding, Option } from "effect"
import { isUuid } from "./ids.js"

/** The lists a client pages through; a cursor names the one it belongs to. */
export type CursorList =
  | "users"
  | "transactions"
  | "orders"
  | "events"
  | "webhook_endpoints"
  | "webhook_deliveries"
  | "partners"
  | "clients"

/** The most writes in progress a cursor lists; a read that saw more is recorded as seeing none of them. */
export const MAX_WRITES_IN_PROGRESS = 32

// A cursor is a few dozen characters, or a few hundred when it lists writes in progress; anything longer is
// refused before it is decoded.
const MAX_CURSOR_LENGTH = 1_024

/** Where a page ended: the id of its last item, and what its read could not see yet (see WritesSeen). */
export interface CursorPosition {
  readonly key: string
  readonly seen: WritesSeen | null
}

/**
 * Which writes a page's read saw, as the store numbers its transactions: every one below `before`, none from
 * `upTo` on, and between the two all but those `inProgress`. A list that keeps this in its cursors can give,
 * with its next page, the rows that committed after the read although their ids sort before the page's end:
 * rows are then never skipped, only (rarely) given twice.
 */
export interface WritesSeen {
  readonly before: bigint
  readonly upTo: bigint
  readonly inProgress: ReadonlyArray<bigint>
}

const MAX_TRANSACTION_NUMBER = 2n ** 63n - 1n

/** The text of what a read saw (`before:upTo:inProgress,...`, PostgreSQL's `pg_snapshot` form). */
export const writesSeenText = (seen: WritesSeen): string =>
  `${seen.before}:${seen.upTo}:${seen.inProgress.join(",")}`

const number = /^(0|[1-9][0-9]{0,18})$/

/**
 * What a read saw, from its text, when it is one (ascending writes in progress within the range, at most
 * `maxInProgress` of them: as many as a cursor holds unless said otherwise); none otherwise.
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
 * What a read saw, for a cursor: as it is, or, when more writes were in progress than a cursor lists, as
 * seeing none from `before` on (rows of those writes may then be given again, never skipped).
 */
export const cursorWritesSeen = (seen: WritesSeen): WritesSeen =>
  seen.inProgress.length <= MAX_WRITES_IN_PROGRESS
    ? seen
    : { before: seen.before, upTo: seen.before, inProgress: [] }

/**
 * The cursor of the page after the item with this id in that list, and what the page's read saw when the
 * list keeps it. Opaque to clients (base64url); it names its list, so a cursor of one list is refused by
 * another instead of starting it at an arbitrary place.
 */
export const encodeCursor = (list: CursorList, key: string, seen?: WritesSeen): string =>
  Encoding.encodeBase64Url(
    seen === undefined ? `${list}:${key}` : `${list}:${key};${writesSeenText(cursorWritesSeen(seen))}`,
  )

/** Where a cursor continues, when it is exactly a cursor of this list (and none otherwise). */
export const cursorPosition = (list: CursorList, cursor: string): Option.Option<CursorPosition> => {
  if (cursor.length > MAX_CURSOR_LENGTH) return Option.none()
  return Either.match(Encoding.decodeBase64UrlString(cursor), {
    onLeft: () => Option.none(),
    onRight: (text) => {
      if (!text.startsWith(`${list}:`)) return Option.none()
      const [key = "", seenText, ...rest] = text.slice(list.length + 1).split(";")
      if (!isUuid(key) || rest.length > 0) return Option.none()
      const seen = seenText === undefined ? Option.some(null) : writesSeenOf(seenText)
      return Option.flatMap(seen, (seen) =>
        // Only the exact text this module makes: decoders accept padding and other spellings of the same bytes.
        encodeCursor(list, key, seen ?? undefined) === cursor ? Option.some({ key, seen }) : Option.none(),
      )
    },
  })
}

/** The id a cursor continues after, when it is exactly a cursor of this list (and none otherwise). */
export const cursorKey = (list: CursorList, cursor: string): Option.Option<string> =>
  Option.map(cursorPosition(list, cursor), (position) => position.key)

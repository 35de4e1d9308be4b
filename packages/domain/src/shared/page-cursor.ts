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

// A cursor is a few dozen characters, or ~100 more when it carries what its page's read saw (a few more for
// each write in progress then); anything longer than a request's head may be is refused before it is decoded.
const MAX_CURSOR_LENGTH = 16_384

/** What a cursor may carry beside its id: a base64url token, opaque here (the store seals what it holds). */
const seenToken = /^[A-Za-z0-9_-]{1,12000}$/

/** Where a page ended: the id of its last item, and the store's token of what its read saw (or none). */
export interface CursorPosition {
  readonly key: string
  readonly seen: string | null
}

/**
 * The cursor of the page after the item with this id in that list, with the store's token of what the page's
 * read saw when the list keeps one. Opaque to clients (base64url); it names its list, so a cursor of one list
 * is refused by another instead of starting it at an arbitrary place.
 */
export const encodeCursor = (list: CursorList, key: string, seen?: string): string =>
  Encoding.encodeBase64Url(seen === undefined ? `${list}:${key}` : `${list}:${key};${seen}`)

/** Where a cursor continues, when it is exactly a cursor of this list (and none otherwise). */
export const cursorPosition = (list: CursorList, cursor: string): Option.Option<CursorPosition> => {
  if (cursor.length > MAX_CURSOR_LENGTH) return Option.none()
  return Either.match(Encoding.decodeBase64UrlString(cursor), {
    onLeft: () => Option.none(),
    onRight: (text) => {
      if (!text.startsWith(`${list}:`)) return Option.none()
      const [key = "", seen, ...rest] = text.slice(list.length + 1).split(";")
      if (!isUuid(key) || rest.length > 0 || (seen !== undefined && !seenToken.test(seen)))
        return Option.none()
      // Only the exact text this module makes: decoders accept padding and other spellings of the same bytes.
      return encodeCursor(list, key, seen) === cursor
        ? Option.some({ key, seen: seen ?? null })
        : Option.none()
    },
  })
}

/** The id a cursor continues after, when it is exactly a cursor of this list (and none otherwise). */
export const cursorKey = (list: CursorList, cursor: string): Option.Option<string> =>
  Option.map(cursorPosition(list, cursor), (position) => position.key)

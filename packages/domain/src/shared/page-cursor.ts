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

// A cursor is a few dozen characters; anything much longer is refused before it is decoded.
const MAX_CURSOR_LENGTH = 96

/**
 * The cursor of the page after the item with this id in that list. Opaque to clients (base64url); it names
 * its list, so a cursor of one list is refused by another instead of starting it at an arbitrary place.
 */
export const encodeCursor = (list: CursorList, key: string): string =>
  Encoding.encodeBase64Url(`${list}:${key}`)

/** The id a cursor continues after, when it is exactly a cursor of this list (and none otherwise). */
export const cursorKey = (list: CursorList, cursor: string): Option.Option<string> => {
  if (cursor.length > MAX_CURSOR_LENGTH) return Option.none()
  return Either.match(Encoding.decodeBase64UrlString(cursor), {
    onLeft: () => Option.none(),
    onRight: (text) => {
      const key = text.startsWith(`${list}:`) ? text.slice(list.length + 1) : ""
      // Only the exact text this module makes: decoders accept padding and other spellings of the same bytes.
      return isUuid(key) && encodeCursor(list, key) === cursor ? Option.some(key) : Option.none()
    },
  })
}

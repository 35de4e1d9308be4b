import { Either } from "effect"

/** What the Authorization header of a request to the OAuth endpoints holds, as HTTP Basic (RFC 7617). */
export type BasicCredentials =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Malformed" }
  | { readonly _tag: "Given"; readonly clientId: string; readonly clientSecret: string }

// `Basic` (any case), one or more spaces, then base64. Any other header (another scheme, no credentials) is
// an attempt at authenticating this client that failed, not something to ignore (RFC 6749 5.2).
const BASIC = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i

const utf8 = new TextDecoder("utf-8", { fatal: true })

// RFC 6749 2.3.1: each part was form-urlencoded before the two were joined, so `+` is a space, `%3A` a colon.
const unform = (part: string) => decodeURIComponent(part.replaceAll("+", " "))

const malformed: BasicCredentials = { _tag: "Malformed" }

/**
 * Reads a request's Authorization header as the client's id and secret: `Absent` without one, `Malformed`
 * when it is not base64 of UTF-8 `id:secret` with well-formed percent-escapes.
 */
export const basicCredentialsOf = (authorization: string | undefined): BasicCredentials => {
  if (authorization === undefined || authorization.trim() === "") return { _tag: "Absent" }
  const encoded = BASIC.exec(authorization)?.[1]
  if (encoded === undefined) return malformed
  const bytes = Buffer.from(encoded, "base64")
  // Node's decoder skips what it cannot read: text that is not exactly its bytes' encoding is not base64.
  if (bytes.toString("base64").replace(/=+$/, "") !== encoded.replace(/=+$/, "")) return malformed
  // TextDecoder (fatal) and decodeURIComponent throw on bytes that are not UTF-8 and on a bad `%` escape.
  const decoded = Either.try(() => {
    const text = utf8.decode(bytes)
    const colon = text.indexOf(":")
    return colon < 0
      ? malformed
      : ({
          _tag: "Given",
          clientId: unform(text.slice(0, colon)),
          clientSecret: unform(text.slice(colon + 1)),
        } as const)
  })
  return Either.getOrElse(decoded, () => malformed)
}

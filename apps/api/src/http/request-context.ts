import type { PartnerId } from "@points/domain"
import { FiberRef, Option } from "effect"

/** The request id of the current request (its `X-Request-ID`, or a fresh UUID), echoed as `X-Request-Id`. */
export const currentRequestId: FiberRef.FiberRef<string> = FiberRef.unsafeMake("")

/**
 * The partner the current request authenticated as, once its bearer token was accepted: read by what answers
 * after the handler's context is gone (a body refused by the schema is recorded against the partner's key).
 */
export const currentPartnerId: FiberRef.FiberRef<Option.Option<PartnerId>> = FiberRef.unsafeMake(
  Option.none<PartnerId>(),
)

/** A request's path: its URL without the query string. */
export const pathOf = (request: { readonly url: string }): string => request.url.split("?")[0] ?? request.url

/**
 * True when every name and value of the request's query string decodes as UTF-8. The platform decodes a
 * malformed sequence (`%FF`, an encoded surrogate) as U+FFFD: a filter the client never sent.
 */
export const queryIsUtf8 = (request: { readonly url: string }): boolean => {
  const start = request.url.indexOf("?")
  if (start === -1) return true
  try {
    for (const pair of request.url.slice(start + 1).split("&")) decodeURIComponent(pair.replaceAll("+", " "))
    return true
  } catch {
    return false
  }
}

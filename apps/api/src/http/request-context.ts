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

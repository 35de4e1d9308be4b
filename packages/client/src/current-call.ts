import { FiberRef, Option } from "effect"

/** What the transport needs to know about the operation it is sending, beyond the request itself. */
export interface CallSettings {
  /** The key every attempt of this POST carries. */
  readonly idempotencyKey: string
  /** A critical operation (published 4.2): a 500 is returned as is, never retried. */
  readonly critical: boolean
}

/**
 * The operation the current fiber is sending, set by the typed methods around their one request (the
 * request built by HttpApiClient has no room for it). None outside a typed method.
 */
export const currentCall = FiberRef.unsafeMake<Option.Option<CallSettings>>(Option.none())

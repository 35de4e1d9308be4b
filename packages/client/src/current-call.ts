import { FiberRef, Option } from "effect"

/** What the transport needs to know about the operation it is sending, beyond the request itself. */
export interface CallSettings {
  /** The key every attempt of this POST carries (null: not a POST). */
  readonly idempotencyKey: string | null
  /** A critical operation (published 4.2): a 500 is returned as is, never retried. */
  readonly critical: boolean
  /** What the transport last sent and heard for this call, for the errors the call may end in. */
  lastAttempt: LastAttempt
}

/**
 * The last attempt of a call: the request id the server knows it by, its status (null: no answer), whether
 * the answer was a recorded one replayed (`Idempotent-Replayed: true`), and the wait its `Retry-After` asked
 * for, in whole seconds (null: none).
 */
export interface LastAttempt {
  readonly requestId: string | null
  readonly status: number | null
  readonly replayed: boolean
  readonly retryAfterSeconds: number | null
}

/** A call before its first attempt. */
export const noAttempt: LastAttempt = {
  requestId: null,
  status: null,
  replayed: false,
  retryAfterSeconds: null,
}

/**
 * The operation the current fiber is sending, set by the typed methods around their one request (the
 * request built by HttpApiClient has no room for it). None outside a typed method.
 */
export const currentCall = FiberRef.unsafeMake<Option.Option<CallSettings>>(Option.none())

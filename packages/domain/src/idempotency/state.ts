import type { DateTime } from "effect"
import type { PartnerId } from "../shared/ids.js"
import type { RequestFingerprint } from "./fingerprint.js"
import type { IdempotencyKeyValue } from "./key.js"
import type { RecordedResponse } from "./response.js"

/** What a key knows during one lifetime: whose it is, the request it belongs to, and when it stops counting. */
interface KeyLifetime {
  readonly partnerId: PartnerId
  readonly key: IdempotencyKeyValue
  readonly fingerprint: RequestFingerprint
  /** The first receipt of the key in this lifetime; the lifetime counts from here. */
  readonly firstReceivedAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc
}

/** A request holds the key and is executing; after `leaseExpiresAt` its process is presumed dead. */
export interface ClaimedKey extends KeyLifetime {
  readonly _tag: "Claimed"
  readonly leaseExpiresAt: DateTime.Utc
}

/** The key's request finished and its response is recorded for every retry. */
export interface CompletedKey extends KeyLifetime {
  readonly _tag: "Completed"
  readonly response: RecordedResponse
}

/** The key's request finished without a recordable response; the same request may claim it again. */
export interface ReleasedKey extends KeyLifetime {
  readonly _tag: "Released"
}

/** The key's last lifetime is over; it is free for any request. */
export interface ExpiredKey {
  readonly _tag: "Expired"
  readonly partnerId: PartnerId
  readonly key: IdempotencyKeyValue
  readonly expiredAt: DateTime.Utc
}

/** The state of a key's stream: never seen, claimed, completed, released or expired. */
export type IdempotencyKeyState =
  | { readonly _tag: "Unclaimed" }
  | ClaimedKey
  | CompletedKey
  | ReleasedKey
  | ExpiredKey

/** A key within a lifetime: one that remembers a request. */
export type LiveKey = ClaimedKey | CompletedKey | ReleasedKey

/** The state before the first event. */
export const unclaimed: IdempotencyKeyState = { _tag: "Unclaimed" }

/** True when the key remembers a request (it was claimed in a lifetime not yet ended by an event). */
export const isLive = (state: IdempotencyKeyState): state is LiveKey =>
  state._tag === "Claimed" || state._tag === "Completed" || state._tag === "Released"

import { Schema } from "effect"
import { PartnerId } from "../shared/ids.js"
import { RequestFingerprint } from "./fingerprint.js"
import { IdempotencyKeyValue } from "./key.js"
import { RecordedResponse } from "./response.js"

const PositiveSeconds = Schema.Int.pipe(
  Schema.positive({ message: () => "must be a positive number of seconds" }),
)

/**
 * Claim a partner's key for a request before executing it: the lease bounds how long the claim holds if its
 * process dies, the lifetime how long the key is honoured after its first receipt.
 */
export class ClaimKey extends Schema.TaggedClass<ClaimKey>()("ClaimKey", {
  partnerId: PartnerId,
  key: IdempotencyKeyValue,
  fingerprint: RequestFingerprint,
  leaseSeconds: PositiveSeconds,
  lifetimeSeconds: PositiveSeconds,
}) {}

/** Finish the claiming request with its response: recorded when its status is recordable, otherwise the key is released. */
export class RecordResponse extends Schema.TaggedClass<RecordResponse>()("RecordResponse", {
  partnerId: PartnerId,
  key: IdempotencyKeyValue,
  response: RecordedResponse,
}) {}

/** Give the key back without a response (the request failed before it had one), so the same request may retry. */
export class ReleaseKey extends Schema.TaggedClass<ReleaseKey>()("ReleaseKey", {
  partnerId: PartnerId,
  key: IdempotencyKeyValue,
}) {}

/** End the key's lifetime once it is over (a sweeper's command); earlier it changes nothing. */
export class ExpireKey extends Schema.TaggedClass<ExpireKey>()("ExpireKey", {
  partnerId: PartnerId,
  key: IdempotencyKeyValue,
}) {}

/** Every command an idempotency key accepts. */
export type IdempotencyKeyCommand = ClaimKey | RecordResponse | ReleaseKey | ExpireKey

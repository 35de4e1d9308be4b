import { Schema } from "effect"
import { errorStatus } from "./http-status.js"

/** The parts of a request that make up its idempotency fingerprint. */
export const FingerprintPart = Schema.Literal("method", "path", "body")
export type FingerprintPart = typeof FingerprintPart.Type

/** IK1001: the key was first used with a different request; nothing was executed. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  differs: Schema.NonEmptyArray(FingerprintPart),
}) {
  get code() {
    return "IK1001" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    const last = this.differs[this.differs.length - 1]
    const parts =
      this.differs.length === 1
        ? `${last} differs`
        : `${this.differs.slice(0, -1).join(", ")} and ${last} differ`
    return `Idempotency-Key was already used with a different request (${parts})`
  }
}

/** IK1002: another request with the same key is executing right now; nothing was executed. */
export class IdempotencyKeyInProgress extends Schema.TaggedError<IdempotencyKeyInProgress>()(
  "IdempotencyKeyInProgress",
  {},
) {
  get code() {
    return "IK1002" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return "a request with this Idempotency-Key is in progress"
  }
}

/** IK1003: the endpoint requires an `Idempotency-Key` header (Create order). */
export class IdempotencyKeyRequired extends Schema.TaggedError<IdempotencyKeyRequired>()(
  "IdempotencyKeyRequired",
  {},
) {
  get code() {
    return "IK1003" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return "Idempotency-Key header is required"
  }
}

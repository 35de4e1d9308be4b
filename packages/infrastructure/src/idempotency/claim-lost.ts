import { Data } from "effect"

/**
 * The key no longer carries this request's claim token: its lease ran out and another request took the key
 * over (or the key expired and was reaped). Whatever this request did in its transaction must not commit,
 * because the request now holding the key will do it; failing with this error rolls that transaction back.
 */
export class ClaimLost extends Data.TaggedError("ClaimLost")<{
  readonly partnerId: string
  readonly key: string
}> {
  override get message() {
    return "the idempotency key was taken over by another request after this request's lease ran out"
  }
}

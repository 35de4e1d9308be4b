import { SqlClient } from "@effect/sql"
import { IdempotencyKey, InvariantViolation } from "@points/domain"
import { Effect, Option } from "effect"
import type { HeldClaim } from "./claim-key.js"
import { type ClaimReference, settleClaim } from "./settle-claim.js"

/** The response a claiming request ended with, for its key. */
export interface RecordResponseRequest extends ClaimReference {
  readonly response: IdempotencyKey.RecordedResponse
  /** The claim, when `claimKeyInTransaction` made it in this same transaction (saves reading the key again). */
  readonly held?: HeldClaim
}

/**
 * Records the claiming request's response, inside the caller's business transaction, so that the response
 * commits with the business events or not at all. A recordable status (every 2xx, 400, 401, 404, 409, 429)
 * completes the key and every retry replays it; any other status releases the key. Fails with ClaimLost when
 * the key was taken over after this request's lease ran out: the caller's transaction then rolls back and
 * its business effect never commits, which is what keeps a key's effect to one even after a takeover.
 * Returns the key's state: Completed or Released.
 */
export const recordResponse = (request: RecordResponseRequest) =>
  Effect.gen(function* () {
    // Outside a transaction the response would commit alone, and a crash before the business work commits
    // would replay a response for an effect that never happened.
    if (Option.isNone(yield* Effect.serviceOption(SqlClient.TransactionConnection))) {
      return yield* Effect.die(
        new InvariantViolation("recordResponse must run inside the business transaction"),
      )
    }
    const { partnerId, key, response } = request
    const settled = yield* settleClaim(
      request,
      IdempotencyKey.RecordResponse.make({ partnerId, key, response }),
      request.held,
    )
    const outcome = settled.state._tag
    if (outcome === "Claimed") {
      return yield* Effect.die(new InvariantViolation("recording a response left the key claimed"))
    }
    return outcome
  }).pipe(Effect.withSpan("idempotency.recordResponse"))

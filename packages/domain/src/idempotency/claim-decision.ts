import { Array as Arr, Data, DateTime, Either } from "effect"
import { IdempotencyKeyInProgress, IdempotencyKeyReused } from "../errors/idempotency-errors.js"
import { differingParts, type RequestFingerprint } from "./fingerprint.js"
import type { RecordedResponse } from "./response.js"
import { type IdempotencyKeyState, isLive } from "./state.js"

/**
 * What a request with a key may do: execute (a new or released key: a lifetime from now), execute anew (the
 * old lifetime is over), take over (the claiming process died: its lease ran out), or replay the recorded
 * response.
 */
export type ClaimDecision = Data.TaggedEnum<{
  Execute: {}
  ExecuteAnew: {}
  TakeOver: {}
  Replay: { readonly response: RecordedResponse }
}>

/** Constructors and matchers for claim decisions. */
export const ClaimDecision = Data.taggedEnum<ClaimDecision>()

/** Why a request may not use a key: it belongs to another request (IK1001), or is executing (IK1002). */
export type ClaimRefusal = IdempotencyKeyReused | IdempotencyKeyInProgress

/**
 * Decides what a request with this fingerprint may do with the key at `now`. A released key (its request
 * ended without a recorded response: a 422, a 5xx) is free again, for any request (DESIGN.md section 4), as
 * a key never used. Otherwise a different request is refused first whenever the key still remembers one, so
 * no retry ever learns more about another request's outcome.
 */
export const claimDecision = (
  state: IdempotencyKeyState,
  claim: { readonly fingerprint: RequestFingerprint },
  now: DateTime.Utc,
): Either.Either<ClaimDecision, ClaimRefusal> => {
  if (!isLive(state) || state._tag === "Released") return Either.right(ClaimDecision.Execute())
  const expired = DateTime.greaterThanOrEqualTo(now, state.expiresAt)
  if (!expired) {
    const differs = differingParts(state.fingerprint, claim.fingerprint)
    if (Arr.isNonEmptyArray(differs)) return Either.left(new IdempotencyKeyReused({ differs }))
  }
  // Checked before expiry: a request still within its lease may be executing, and nothing runs beside it.
  if (state._tag === "Claimed" && DateTime.lessThan(now, state.leaseExpiresAt)) {
    return Either.left(new IdempotencyKeyInProgress())
  }
  if (expired) return Either.right(ClaimDecision.ExecuteAnew())
  switch (state._tag) {
    case "Claimed":
      return Either.right(ClaimDecision.TakeOver())
    case "Completed":
      return Either.right(ClaimDecision.Replay({ response: state.response }))
  }
}

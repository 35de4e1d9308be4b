import type { IncomingMessage } from "node:http"
import type { RateLimitDecision } from "@points/infrastructure"

// The rate-limit decisions the direct write path took for requests it then handed to the platform.
const decisions = new WeakMap<IncomingMessage, RateLimitDecision>()

/**
 * Hands the platform a request's rate-limit decision along with the request: the direct write path consumed
 * it already, and a request counts once against its partner's limit however it is answered.
 */
export const handOverDecision = (request: IncomingMessage, decision: RateLimitDecision): void => {
  decisions.set(request, decision)
}

/** The rate-limit decision already taken for a request (see handOverDecision), once. */
export const takeHandedOverDecision = (request: IncomingMessage): RateLimitDecision | undefined => {
  const decision = decisions.get(request)
  decisions.delete(request)
  return decision
}

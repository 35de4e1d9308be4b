import type { RateLimitDecision } from "@points/infrastructure"

/**
 * The `RateLimit-Policy` and `RateLimit` headers (IETF draft syntax, DESIGN.md section 7) of a decision under
 * the named policy, and `Retry-After` when the request was refused.
 */
export const rateLimitHeaders = (policy: string, decision: RateLimitDecision): Record<string, string> => ({
  "RateLimit-Policy": `"${policy}";q=${decision.limit};w=1`,
  RateLimit: `"${policy}";r=${decision.remaining};t=${decision.resetSeconds}`,
  ...(decision.allowed ? {} : { "Retry-After": String(decision.retryAfterSeconds) }),
})

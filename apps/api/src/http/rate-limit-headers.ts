import type { RateLimitDecision } from "@points/infrastructure"

/**
 * The `RateLimit-Policy` and `RateLimit` headers (IETF draft syntax, DESIGN.md section 7) of the decisions a
 * request was given, one list item per named policy in the order they were consulted, and `Retry-After` when
 * one of them refused it (the longest wait of those that did).
 */
export const rateLimitHeaders = (
  decisions: ReadonlyArray<readonly [policy: string, decision: RateLimitDecision]>,
): Record<string, string> => {
  const refusals = decisions.filter(([, decision]) => !decision.allowed)
  return {
    "RateLimit-Policy": decisions
      .map(([policy, decision]) => `"${policy}";q=${decision.limit};w=1`)
      .join(", "),
    RateLimit: decisions
      .map(([policy, decision]) => `"${policy}";r=${decision.remaining};t=${decision.resetSeconds}`)
      .join(", "),
    ...(refusals.length === 0
      ? {}
      : { "Retry-After": String(Math.max(...refusals.map(([, decision]) => decision.retryAfterSeconds))) }),
  }
}

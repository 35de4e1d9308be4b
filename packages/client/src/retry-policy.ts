import { Duration, Effect, Random } from "effect"

/**
 * How the client retries (published retry guidance, section 4.2): connection failures and 502/503/504 with
 * exponential backoff and jitter, 429 after its Retry-After, a bounded number of times, always with the same
 * Idempotency-Key.
 */
export interface RetryPolicy {
  /** Retries after the first attempt (0..15; the guidance recommends at most 15 in 24 hours). Default 15. */
  readonly maxRetries: number
  /** The first backoff. Default 500 ms. */
  readonly initialDelay: Duration.DurationInput
  /** The longest backoff between two attempts. Default 60 s. */
  readonly maxDelay: Duration.DurationInput
  /** The longest Retry-After honoured; a 429 asking for more is returned to the caller. Default 120 s. */
  readonly maxRetryAfter: Duration.DurationInput
  /** How long one attempt may take before it counts as a connection failure. Default 30 s. */
  readonly requestTimeout: Duration.DurationInput
  /**
   * The longest one call may take, its attempts, token fetches and waits included, before it fails with
   * RetriesExhausted (the outcome open: retry later with its key). Default: none, bounded by maxRetries.
   */
  readonly deadline: Duration.DurationInput | undefined
}

/** The published guidance's maximum number of retries within 24 hours. */
export const MAX_RETRIES = 15

/** The defaults: at most 15 retries, backoff from 0.5 s doubling up to 60 s (about 10 minutes in all). */
export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: MAX_RETRIES,
  initialDelay: "500 millis",
  maxDelay: "60 seconds",
  maxRetryAfter: "120 seconds",
  requestTimeout: "30 seconds",
  deadline: undefined,
}

/** A policy with its durations resolved, checked once when the client is made. */
export interface ResolvedRetryPolicy {
  readonly maxRetries: number
  readonly initialDelayMillis: number
  readonly maxDelayMillis: number
  readonly maxRetryAfterMillis: number
  readonly requestTimeout: Duration.Duration
  readonly deadlineMillis: number | undefined
}

/** Fills in the defaults and rejects a policy that is not bounded (a defect: it is the caller's code). */
export const resolveRetryPolicy = (overrides: Partial<RetryPolicy> = {}): ResolvedRetryPolicy => {
  const policy = { ...defaultRetryPolicy, ...overrides }
  if (!(Number.isInteger(policy.maxRetries) && policy.maxRetries >= 0 && policy.maxRetries <= MAX_RETRIES)) {
    throw new RangeError(`maxRetries must be an integer from 0 to ${MAX_RETRIES}`)
  }
  const millis = (name: string, input: Duration.DurationInput) => {
    const value = Duration.toMillis(Duration.decode(input))
    if (!(Number.isFinite(value) && value >= 0)) throw new RangeError(`${name} must be a finite duration`)
    return value
  }
  return {
    maxRetries: policy.maxRetries,
    initialDelayMillis: millis("initialDelay", policy.initialDelay),
    maxDelayMillis: millis("maxDelay", policy.maxDelay),
    maxRetryAfterMillis: millis("maxRetryAfter", policy.maxRetryAfter),
    requestTimeout: Duration.millis(millis("requestTimeout", policy.requestTimeout)),
    deadlineMillis: policy.deadline === undefined ? undefined : millis("deadline", policy.deadline),
  }
}

/**
 * The wait before retry number `retry` (0 for the first): exponential, capped, with "equal jitter" (half
 * fixed, half random) so that clients failing together do not retry together.
 */
export const backoffMillis = (policy: ResolvedRetryPolicy, retry: number) =>
  Effect.map(Random.next, (random) => {
    const ceiling = Math.min(policy.maxDelayMillis, policy.initialDelayMillis * 2 ** Math.min(retry, 30))
    return ceiling / 2 + (random * ceiling) / 2
  })

/** A Retry-After header (seconds or an HTTP date) in milliseconds from `now`; undefined when absent or invalid. */
export const retryAfterMillis = (value: string | undefined, now: number): number | undefined => {
  if (value === undefined) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** How fast a key may make requests: a sustained rate, and how many may come at once after a quiet spell. */
export interface RateLimitPolicy {
  /** Requests per second allowed on average (the bucket refills at this rate). */
  readonly ratePerSecond: number
  /** Requests allowed at once: the bucket's size. */
  readonly burst: number
}

/** The largest burst a policy may have; beyond it the state arithmetic would leave exact integers. */
export const MAX_BURST = 1_000_000

/**
 * The GCRA parameters of a policy in whole microseconds (the resolution of timestamptz): the emission
 * interval between two requests at the sustained rate, and the burst tolerance, how far ahead of the clock
 * the theoretical arrival time may run. Throws RangeError on a policy that is not a positive rate and burst, a
 * configuration bug (settings are validated at start).
 */
export const gcraOf = (policy: RateLimitPolicy) => {
  const { ratePerSecond, burst } = policy
  if (!(Number.isFinite(ratePerSecond) && ratePerSecond > 0)) {
    throw new RangeError(`rate limit: ratePerSecond must be a positive number, got ${ratePerSecond}`)
  }
  if (!(Number.isInteger(burst) && burst >= 1 && burst <= MAX_BURST)) {
    throw new RangeError(`rate limit: burst must be an integer from 1 to ${MAX_BURST}, got ${burst}`)
  }
  const emissionMicros = Math.max(1, Math.round(1_000_000 / ratePerSecond))
  const toleranceMicros = emissionMicros * burst
  if (!Number.isSafeInteger(toleranceMicros)) {
    throw new RangeError(`rate limit: burst ${burst} at ${ratePerSecond}/s spans too long a time`)
  }
  return { emissionMicros, toleranceMicros }
}

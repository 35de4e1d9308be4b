/** The largest number sequentialId takes: its 12 hex digits. */
const MAX = 0xffff_ffff_ffff

/**
 * A lowercase UUID v7 made from `n` (0 to 2^48 - 1), the same for the same `n`: an id for tests, where a
 * readable, repeatable one beats a random one. Brand it with the id's schema: `UserId.make(sequentialId(1))`.
 * Ids from different numbers are different, and sort as their numbers do.
 */
export const sequentialId = (n: number): string => {
  if (!Number.isSafeInteger(n) || n < 0 || n > MAX) {
    throw new RangeError(`sequentialId takes a whole number from 0 to ${MAX}, got ${n}`)
  }
  return `00000000-0000-7000-8000-${n.toString(16).padStart(12, "0")}`
}

import { Either } from "effect"

/**
 * When each attempt is made, in seconds, as Standard Webhooks recommends: the first at once, then each
 * period after the failure of the one before (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h).
 * After the last attempt fails, the platform gives up on that delivery.
 */
export const DEFAULT_RETRY_SCHEDULE: ReadonlyArray<number> = [
  0, 5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400,
]

/** The most attempts a schedule may list. */
export const MAX_ATTEMPTS = 50

/** The longest wait a schedule may list between two attempts: a week. */
export const MAX_RETRY_DELAY_SECONDS = 7 * 86_400

const invalid = (problem: string) => Either.left(`WEBHOOK_RETRY_SCHEDULE ${problem}`)

/**
 * Reads a retry schedule written as comma-separated seconds (`0,5,300`): 1 to 50 whole numbers, the first 0
 * (the first attempt is made as soon as the event is published), none above a week. Left: what is wrong.
 */
export const parseRetrySchedule = (text: string): Either.Either<ReadonlyArray<number>, string> => {
  const parts = text.split(",").map((part) => part.trim())
  if (parts.length > MAX_ATTEMPTS) return invalid(`must list at most ${MAX_ATTEMPTS} attempts`)
  const seconds: Array<number> = []
  for (const part of parts) {
    if (!/^\d+$/.test(part)) return invalid(`must be comma-separated whole seconds, not "${part}"`)
    const value = Number(part)
    if (value > MAX_RETRY_DELAY_SECONDS) {
      return invalid(`must not wait more than ${MAX_RETRY_DELAY_SECONDS} seconds between attempts`)
    }
    seconds.push(value)
  }
  if (seconds[0] !== 0) return invalid("must start with 0: the first attempt is made at once")
  return Either.right(seconds)
}

/** Checks a schedule given in code as `parseRetrySchedule` checks one read from the environment. */
export const validRetrySchedule = (schedule: ReadonlyArray<number>) => parseRetrySchedule(schedule.join(","))

/**
 * How many seconds after attempt `attempt` (1-based) failed the next one is due: the schedule's entry, or
 * the receiver's Retry-After when that is later (capped at a day); none after the last attempt.
 */
export const secondsUntilNextAttempt = (
  schedule: ReadonlyArray<number>,
  attempt: number,
  retryAfterSeconds: number | null,
): number | null => {
  const scheduled = schedule[attempt]
  if (scheduled === undefined) return null
  return Math.max(scheduled, Math.min(retryAfterSeconds ?? 0, MAX_RETRY_AFTER_SECONDS))
}

/** The longest Retry-After honoured: a receiver cannot park a delivery for longer than a day per attempt. */
export const MAX_RETRY_AFTER_SECONDS = 86_400

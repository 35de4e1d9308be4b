import { Clock, Duration, Effect } from "effect"

/**
 * Runs a decision with Effect's Clock pinned at `millis` (Unix milliseconds): every time it reads is that
 * one. A decision that sleeps dies: it only reads the time, and one that waits is a bug.
 */
export const atInstant =
  (millis: number) =>
  <A, E, R>(decision: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withClock(decision, pinnedClock(millis))

/**
 * Runs a decision that spans several aggregates at one instant, read once from the clock: the events one
 * transaction appends (an order placed and its debit, an order cancelled and its refund) carry one time, so
 * a partner can match them by it and no event of the transaction appears to precede another.
 */
export const atOneInstant = <A, E, R>(decision: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Clock.currentTimeMillis, (millis) => atInstant(millis)(decision))

const pinnedClock = (millis: number): Clock.Clock => {
  const nanos = BigInt(millis) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => millis,
    currentTimeMillis: Effect.succeed(millis),
    unsafeCurrentTimeNanos: () => nanos,
    currentTimeNanos: Effect.succeed(nanos),
    sleep: (duration: Duration.Duration) =>
      Effect.dieMessage(`a decision tried to sleep ${Duration.format(duration)}`),
  }
}

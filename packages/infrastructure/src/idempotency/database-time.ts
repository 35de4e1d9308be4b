import { Clock, DateTime, Duration, Effect } from "effect"

/**
 * Runs a decision with Effect's Clock pinned to a time the database gave. Leases and lifetimes are compared
 * across every API process, whose clocks drift apart; the database's clock is the one they all share, so a
 * key's times are read from `now()` in the transaction that writes them and handed to the decider here.
 */
export const atDatabaseTime =
  (now: DateTime.Utc) =>
  <A, E, R>(decision: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withClock(decision, pinnedClock(DateTime.toEpochMillis(now)))

const pinnedClock = (millis: number): Clock.Clock => {
  const nanos = BigInt(millis) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => millis,
    currentTimeMillis: Effect.succeed(millis),
    unsafeCurrentTimeNanos: () => nanos,
    currentTimeNanos: Effect.succeed(nanos),
    // A decision only reads the time; one that sleeps is a bug, not something to wait for.
    sleep: (duration: Duration.Duration) =>
      Effect.dieMessage(`a decision tried to sleep ${Duration.format(duration)}`),
  }
}

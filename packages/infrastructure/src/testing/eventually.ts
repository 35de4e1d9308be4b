import { type Duration, Effect } from "effect"

/**
 * Polls `probe` every `every` (20 ms) until `check` holds and returns that value; dies after `seconds`. For
 * tests that wait on something asynchronous (a consumer, another process): a condition with a deadline, never
 * a sleep.
 */
export const eventually = <A, E, R>(
  probe: Effect.Effect<A, E, R>,
  check: (value: A) => boolean,
  seconds = 15,
  every: Duration.DurationInput = "20 millis",
) =>
  Effect.gen(function* () {
    const deadline = Date.now() + seconds * 1000
    for (;;) {
      const value = yield* probe
      if (check(value)) return value
      if (Date.now() > deadline) return yield* Effect.dieMessage(`condition not reached in ${seconds} s`)
      yield* Effect.sleep(every)
    }
  })

import { Data, type Duration, Effect, Option, Ref, Schedule } from "effect"
import type { LogCheckpoint } from "../event-store/recorded-event.js"
import { logStart } from "../event-store/recorded-event.js"
import { compareCheckpoints } from "./checkpoint-row.js"
import { readCheckpoint } from "./read-checkpoint.js"
import { readLogHead } from "./read-log-head.js"

/** A consumer did not reach a place in the log before the deadline. */
export class ConsumerNotCaughtUp extends Data.TaggedError("ConsumerNotCaughtUp")<{
  readonly consumer: string
  readonly target: LogCheckpoint
  readonly reached: LogCheckpoint
}> {
  override get message() {
    const at = (c: LogCheckpoint) => `(${c.transactionId}, ${c.globalPosition})`
    return `consumer ${this.consumer} reached ${at(this.reached)}, not ${at(this.target)}`
  }
}

/** How often the checkpoint is read while waiting. */
const CHECK_EVERY = "10 millis"

/**
 * Waits until a consumer's checkpoint has reached `target` (an event as recorded, any checkpoint, or "head":
 * the last event committed when the wait starts), reading the checkpoint table every 10 ms, and fails with
 * ConsumerNotCaughtUp after `timeout`. For tests and readiness checks: wait on the real condition, not a sleep.
 */
export const waitUntilCaughtUp = (
  consumer: string,
  target: LogCheckpoint | "head",
  timeout: Duration.DurationInput,
) =>
  Effect.gen(function* () {
    const goal = target === "head" ? yield* readLogHead : target
    const reached = yield* Ref.make(logStart)
    // Uninterruptible: the timeout below must not cancel a query in flight (see log-listener.ts).
    const check = readCheckpoint(consumer).pipe(
      Effect.uninterruptible,
      Effect.map(Option.getOrElse(() => logStart)),
      Effect.tap((checkpoint) => Ref.set(reached, checkpoint)),
    )
    return yield* check.pipe(
      Effect.repeat({
        until: (checkpoint) => compareCheckpoints(checkpoint, goal) >= 0,
        schedule: Schedule.spaced(CHECK_EVERY),
      }),
      Effect.asVoid,
      Effect.timeout(timeout),
      Effect.catchTag("TimeoutException", () =>
        Effect.flatMap(Ref.get(reached), (last) =>
          Effect.fail(new ConsumerNotCaughtUp({ consumer, target: goal, reached: last })),
        ),
      ),
    )
  })

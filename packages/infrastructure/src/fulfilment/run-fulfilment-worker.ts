import { SqlClient } from "@effect/sql"
import { Cause, Duration, Effect, Option, Queue, Schedule } from "effect"
import { LogListener } from "../consumers/log-listener.js"
import type { InlineProjection } from "../event-store/inline-projection.js"
import { LogNotifier } from "../event-store/log-notifier.js"
import { advanceJob } from "./advance-job.js"
import { lockNextJob } from "./lock-next-job.js"
import { rescheduleJob } from "./store-job-stage.js"

/** How a fulfilment worker paces itself. */
export interface FulfilmentWorkerOptions {
  /** How long an order stays processing before its last step (FULFILMENT_DELAY_MS). */
  readonly delay: Duration.DurationInput
  /** The longest an idle worker waits before it looks for due jobs again without being woken. */
  readonly pollInterval: Duration.DurationInput
  /** How many jobs this process works on at once, 1 to 64 (default 1). */
  readonly concurrency?: number
}

/** What one turn of a worker found: a job it advanced (look again at once), or how long to wait. */
type Turn = { readonly _tag: "Advanced" } | { readonly _tag: "Idle"; readonly wait: Duration.Duration }

// A job due in under a millisecond is waited for a millisecond: never a loop that spins on the clock.
const SHORTEST_WAIT = Duration.millis(1)

/**
 * One turn, in one transaction: lock the job due first that no other worker holds; if it is due, run its
 * step (in a savepoint) and advance it, all committing together. A step that fails leaves nothing but the
 * job postponed with its error (retryDelayOf), so a broken order never blocks the others nor spins.
 * Uninterruptible: stopping a worker never cancels a query in flight; it stops between turns.
 */
const turn = (delay: Duration.Duration, pollInterval: Duration.Duration) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifier = yield* LogNotifier
    const result = yield* sql.withTransaction(
      Effect.gen(function* () {
        const next = yield* lockNextJob
        if (Option.isNone(next)) return { _tag: "Idle", wait: pollInterval } satisfies Turn
        const job = next.value
        if (!job.due) {
          const wait = Duration.clamp(Duration.millis(job.dueInMillis), {
            minimum: SHORTEST_WAIT,
            maximum: pollInterval,
          })
          return { _tag: "Idle", wait } satisfies Turn
        }
        yield* sql.withTransaction(advanceJob(job, delay)).pipe(
          Effect.sandbox,
          Effect.catchAll((cause) =>
            Effect.zipRight(
              Effect.logWarning("fulfilment step failed and rolled back; retrying later", cause),
              rescheduleJob(job, Cause.pretty(cause)),
            ),
          ),
          Effect.annotateLogs({ orderId: job.orderId, stage: job.stage, attempts: job.attempts }),
        )
        return { _tag: "Advanced" } satisfies Turn
      }),
    )
    // After the commit, so that other consumers (webhooks) can already read what the step appended.
    if (result._tag === "Advanced") yield* notifier.committed
    return result as Turn
  }).pipe(Effect.uninterruptible)

// A turn that failed (the database out of reach) is retried, doubling from 100 ms up to 30 s, jittered.
const turnRetry = Schedule.exponential("100 millis").pipe(
  Schedule.union(Schedule.spaced("30 seconds")),
  Schedule.jittered,
)

/**
 * Runs sandbox fulfilment workers until interrupted: each loop takes the job due first that no one else
 * holds (FOR UPDATE SKIP LOCKED), so any number of loops and processes do each step exactly once; picks a
 * pending order up when its job is due (`delay` after it was placed), and completes or fails it `delay`
 * later. An idle loop waits until the next job is due, a NOTIFY on the log channel (new jobs, new events) or `pollInterval`, whichever comes first.
 */
export const runFulfilmentWorker = (
  options: FulfilmentWorkerOptions,
): Effect.Effect<never, never, SqlClient.SqlClient | LogListener | LogNotifier | InlineProjection> =>
  Effect.gen(function* () {
    const concurrency = options.concurrency ?? 1
    if (!(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= 64)) {
      return yield* Effect.dieMessage("fulfilment worker: concurrency must be 1 to 64")
    }
    const delay = Duration.decode(options.delay)
    const pollInterval = Duration.decode(options.pollInterval)
    const listener = yield* LogListener

    const loop = Effect.scoped(
      Effect.gen(function* () {
        // A NOTIFY only raises a flag; cleared before each turn, so one arriving during a turn ends the wait.
        const wake = yield* listener.subscribe
        return yield* Effect.forever(
          Effect.gen(function* () {
            yield* Queue.takeAll(wake)
            const next = yield* turn(delay, pollInterval).pipe(
              Effect.sandbox,
              Effect.tapError((cause) => Effect.logWarning("fulfilment turn failed; retrying", cause)),
              Effect.retry(turnRetry),
              Effect.orDie,
            )
            if (next._tag === "Idle") yield* Queue.take(wake).pipe(Effect.timeoutOption(next.wait))
          }),
        )
      }),
    )
    yield* Effect.logInfo("fulfilment worker started")
    return yield* Effect.all(
      Array.from({ length: concurrency }, () => loop),
      { concurrency: "unbounded", discard: true },
    ).pipe(Effect.zipRight(Effect.never))
  }).pipe(Effect.annotateLogs({ worker: "order-fulfilment" }))

import { SqlClient } from "@effect/sql"
import { Cause, Clock, Duration, Effect, Metric, Option, Queue, Ref, Schedule } from "effect"
import {
  isLogEventType,
  type LogEventOfType,
  type LogEventType,
  logEventTypes,
} from "../event-store/log-event-type.js"
import { readAllAfter } from "../event-store/read-all-after.js"
import type { RecordedEvent } from "../event-store/recorded-event.js"
import { ConsumerLockLost, holdConsumerLock, probeLock } from "./consumer-lock.js"
import { consumerMetric } from "./consumer-metrics.js"
import { ensureCheckpoint } from "./ensure-checkpoint.js"
import { hasEventsAfter } from "./has-events-after.js"
import { lockCheckpoint } from "./lock-checkpoint.js"
import { LogListener } from "./log-listener.js"
import { storeCheckpoint } from "./store-checkpoint.js"

/**
 * What a consumer does with the global log, and how it paces itself. `Type` is the event types it is given
 * (`eventTypes`; every type without it), so its handler sees those events' own types.
 */
export interface ConsumerOptions<E, R, Type extends LogEventType = LogEventType> {
  /** Names the consumer: its checkpoint row, its lock, its metrics and logs. */
  readonly name: string
  /**
   * Handles a batch of events in commit order, inside the transaction that moves the checkpoint past them:
   * its database writes commit with the checkpoint (exactly once); anything else it does (an HTTP call) may
   * happen again after a failure (at least once). A failure rolls the batch back and it is retried.
   */
  readonly handle: (events: ReadonlyArray<RecordedEvent<LogEventOfType<Type>>>) => Effect.Effect<void, E, R>
  /**
   * The event types the handler is given (default every type), as stored: `"PointsAdded"`, not the
   * webhooks' `points.added`. The checkpoint moves past the others without their payloads being fetched or
   * decoded: a consumer of a few types in a busy log reads little. A type the log cannot hold is refused at
   * start, since the checkpoint would move past the events it meant, for good.
   */
  readonly eventTypes?: ReadonlyArray<Type>
  /** Events per batch (of every type), 1 to MAX_BATCH_SIZE. */
  readonly batchSize: number
  /** How long an idle consumer waits for a NOTIFY before it reads the log anyway. */
  readonly pollInterval: Duration.DurationInput
  /**
   * Paces the reads of a busy log (default none): after a read that found at least `fromEvents` events, the
   * next read a NOTIFY starts waits until `interval` has passed since that one began. Under a steady stream
   * of commits the consumer then reads once per interval, many commits' events at a time, instead of once
   * per commit (each read is a transaction of several statements); a quiet log is read at once, and a full
   * batch reads on at once.
   */
  readonly pacing?: { readonly interval: Duration.DurationInput; readonly fromEvents: number }
  /** How often an instance waiting for the lock tries again (default 5 seconds). */
  readonly lockRetryInterval?: Duration.DurationInput
  /** The backoff between retries of a failed batch: doubling from `initial` up to `max` (100 ms, 30 s). */
  readonly retryBackoff?: { readonly initial: Duration.DurationInput; readonly max: Duration.DurationInput }
}

/** The largest batch a consumer may ask for: one transaction should stay short. */
export const MAX_BATCH_SIZE = 10_000

/** The first wait when events lie ahead but were not read (held back); it doubles up to the poll interval. */
const HELD_BACK_FIRST_WAIT = Duration.millis(10)

// Doubling from `initial`, capped at `max`, with jitter so that instances recovering together spread out;
// reset after a quiet spell, so a failure after hours of work starts again from `initial`.
const backoff = (initial: Duration.DurationInput, max: Duration.DurationInput) =>
  Schedule.exponential(initial).pipe(
    Schedule.union(Schedule.spaced(max)),
    Schedule.jittered,
    Schedule.resetAfter(Duration.times(Duration.decode(max), 2)),
  )

const isLockLost = (cause: Cause.Cause<unknown>) =>
  Option.exists(Cause.failureOption(cause), (error) => error instanceof ConsumerLockLost)

/**
 * Runs a consumer of the global log until interrupted (fork it in a scope): at most one instance per name
 * across every process holds its advisory lock and works, the others wait to take over. The working one
 * handles the log after its checkpoint in bounded batches, each in one transaction with the checkpoint
 * (locked FOR UPDATE, read, handled, moved), in commit order and below the snapshot's xmin, so an event that
 * commits late is never skipped. After a full batch it reads on at once; otherwise it waits for a NOTIFY on
 * LOG_CHANNEL (through the process's LogListener) or the poll interval, whichever comes first (a lost
 * NOTIFY only delays). A failed batch rolls back and is retried with a capped exponential backoff, logged,
 * for as long as it takes: an event is never skipped. A lost lock connection ends the session, and the
 * instance queues for the lock again.
 */
export const runConsumer = <E, R, Type extends LogEventType = LogEventType>(
  options: ConsumerOptions<E, R, Type>,
): Effect.Effect<never, never, R | SqlClient.SqlClient | LogListener> =>
  Effect.gen(function* () {
    const { name, handle, batchSize } = options
    if (!(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= MAX_BATCH_SIZE)) {
      return yield* Effect.dieMessage(`consumer ${name}: batchSize must be 1 to ${MAX_BATCH_SIZE}`)
    }
    // Checked at run time too: a name from configuration or a cast escapes the type.
    const unknownTypes = (options.eventTypes ?? []).filter((type) => !isLogEventType(type))
    if (unknownTypes.length > 0) {
      return yield* Effect.dieMessage(
        `consumer ${name}: eventTypes names no event type of the log: ${unknownTypes.join(", ")} (the log's types: ${logEventTypes.join(", ")})`,
      )
    }
    if (options.eventTypes?.length === 0) {
      return yield* Effect.dieMessage(
        `consumer ${name}: eventTypes is empty, so it would handle nothing; leave it out to handle every type`,
      )
    }
    const sql = yield* SqlClient.SqlClient
    const listener = yield* LogListener
    const pollInterval = Duration.decode(options.pollInterval)
    const pacing =
      options.pacing === undefined
        ? undefined
        : {
            millis: Duration.toMillis(Duration.decode(options.pacing.interval)),
            fromEvents: options.pacing.fromEvents,
          }
    const retry = backoff(
      options.retryBackoff?.initial ?? "100 millis",
      options.retryBackoff?.max ?? "30 seconds",
    )
    const metric = {
      reads: consumerMetric.reads(name),
      events: consumerMetric.events(name),
      failures: consumerMetric.failures(name),
    }

    // One batch: the checkpoint, the events after it, the handler and the moved checkpoint commit together.
    const batch = sql.withTransaction(
      Effect.gen(function* () {
        const checkpoint = yield* lockCheckpoint(name)
        const read = yield* readAllAfter(checkpoint, batchSize, options.eventTypes)
        // The read returned only events of the types asked for, each decoded by its stream's catalog.
        if (read.events.length > 0)
          yield* handle(read.events as ReadonlyArray<RecordedEvent<LogEventOfType<Type>>>)
        if (read.scanned > 0) yield* storeCheckpoint(name, read.checkpoint)
        return read
      }),
    )

    const session = Effect.gen(function* () {
      const lockConnection = yield* holdConsumerLock(name, options.lockRetryInterval ?? "5 seconds")
      yield* Effect.logInfo("consumer holds its lock")
      yield* ensureCheckpoint(name)

      // A NOTIFY only raises a flag; the loop clears it before each read, so one that arrives while reading
      // makes the next wait end at once.
      const wake = yield* listener.subscribe

      const step = (behindWaits: Ref.Ref<number>) =>
        Effect.gen(function* () {
          yield* Queue.takeAll(wake)
          const readAt = yield* Clock.currentTimeMillis
          const read = yield* probeLock(lockConnection, name).pipe(
            Effect.zipRight(batch),
            Effect.withSpan("consumer.batch", { attributes: { consumer: name } }),
            Effect.sandbox,
            Effect.tapError((cause) =>
              isLockLost(cause) || Cause.isInterruptedOnly(cause)
                ? Effect.void
                : Effect.zipRight(
                    Metric.increment(metric.failures),
                    Effect.logWarning("consumer batch failed and rolled back; retrying", cause),
                  ),
            ),
            Effect.retry({
              schedule: retry,
              while: (cause) => !isLockLost(cause) && !Cause.isInterruptedOnly(cause),
            }),
            Effect.unsandbox,
          )
          yield* Metric.increment(metric.reads)
          yield* Metric.incrementBy(metric.events, read.scanned)
          if (read.scanned === batchSize) {
            return yield* Ref.set(behindWaits, 0)
          }
          // Events committed after an older, still open transaction stay hidden until it ends, and nothing
          // announces that (nor did anything announce events that became readable since this read): when any
          // lie ahead, look again soon, backing off, instead of at the next poll.
          const behind = yield* hasEventsAfter(read.checkpoint)
          const waits = yield* Ref.modify(behindWaits, (n): [number, number] => {
            const streak = read.scanned > 0 ? 0 : n
            return behind ? [streak, Math.min(streak + 1, 16)] : [0, 0]
          })
          const wait = behind
            ? Duration.min(Duration.times(HELD_BACK_FIRST_WAIT, 2 ** waits), pollInterval)
            : pollInterval
          const woken = yield* Queue.take(wake).pipe(Effect.timeoutOption(wait))
          if (pacing !== undefined && Option.isSome(woken) && !behind && read.scanned >= pacing.fromEvents) {
            const since = (yield* Clock.currentTimeMillis) - readAt
            if (since < pacing.millis) yield* Effect.sleep(Duration.millis(pacing.millis - since))
          }
        })

      const behindWaits = yield* Ref.make(0)
      return yield* Effect.forever(step(behindWaits))
    })

    return yield* Effect.scoped(session).pipe(
      Effect.sandbox,
      Effect.tapError((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.void
          : Effect.logWarning("consumer session ended; queueing for the lock again", cause),
      ),
      Effect.retry({ schedule: retry, while: (cause) => !Cause.isInterruptedOnly(cause) }),
      Effect.unsandbox,
      // The schedule never ends and only interruption is not retried: nothing is left to fail with.
      Effect.orDie,
    )
  }).pipe(Effect.annotateLogs({ consumer: options.name }))

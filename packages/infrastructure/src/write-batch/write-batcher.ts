import { SqlClient } from "@effect/sql"
import { Cause, Chunk, Context, Deferred, Effect, Exit, Layer, Metric } from "effect"
import { InlineProjection } from "../event-store/inline-projection.js"
import { LogNotifier } from "../event-store/log-notifier.js"
import { StreamVersionConflict } from "../event-store/stream-version-conflict.js"
import { makeRoundQueue, type Pending as RoundPending } from "../runtime/round-queue.js"
import { batchMetric } from "./batch-metrics.js"
import { type BatchEntry, type BatchResult, runAlone, runBatch } from "./run-batch.js"

/** The most requests one batch writes: bounds the statements' arrays and the time the batch holds its locks. */
export const MAX_WRITE_BATCH_SIZE = 64

type Pending = RoundPending<BatchEntry, BatchResult, never>

/**
 * Group commit of idempotent writes: the requests that arrive while a batch is being written are written
 * together in the next one (runBatch), one transaction, one commit and a handful of statements for all of
 * them, instead of each its own. Nothing waits for a batch to fill: a lone request is a batch of one. A
 * request the batch leaves out (RunAlone) is then run on its own by the caller; one whose key an earlier
 * request of the batch had is answered IK1002 by the caller (InProgress).
 */
export class WriteBatcher extends Context.Tag("@points/infrastructure/WriteBatcher")<
  WriteBatcher,
  { readonly submit: (entry: BatchEntry) => Effect.Effect<BatchResult> }
>() {
  /** One batching fiber per process, for as long as the layer lives. */
  static readonly layer = Layer.scoped(
    WriteBatcher,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const projection = yield* InlineProjection
      const notifier = yield* LogNotifier

      const writeBatch = (batch: ReadonlyArray<Pending>) =>
        Effect.gen(function* () {
          const exit = yield* Effect.exit(
            sql
              .withTransaction(runBatch(batch.map((pending) => pending.item)))
              .pipe(Effect.provideService(InlineProjection, projection)),
          )
          if (Exit.isFailure(exit) && !isConflict(exit.cause)) {
            yield* Effect.logWarning("a write batch rolled back; its requests run one by one", exit.cause)
          }
          const results = Exit.isSuccess(exit) ? exit.value : batch.map(() => runAlone)
          const count = (tag: BatchResult["_tag"]) => results.filter((result) => result._tag === tag).length
          const committed = count("Committed")
          yield* Metric.increment(batchMetric.batches(Exit.isSuccess(exit) ? "committed" : "rolled_back"))
          yield* Metric.incrementBy(batchMetric.requests("committed"), committed)
          yield* Metric.incrementBy(batchMetric.requests("in_progress"), count("InProgress"))
          yield* Metric.incrementBy(batchMetric.requests("run_alone"), count("RunAlone"))
          if (committed > 0) yield* notifier.committed
          yield* Effect.forEach(
            batch,
            (pending, n) => Deferred.succeed(pending.done, results[n] ?? runAlone),
            {
              discard: true,
            },
          )
        })
      // Once the layer is released, requests still queued and every later one run alone.
      const queue = yield* makeRoundQueue({
        maxRound: MAX_WRITE_BATCH_SIZE,
        round: writeBatch,
        leftover: (left) =>
          Effect.forEach(left, (pending) => Deferred.succeed(pending.done, runAlone), { discard: true }),
        afterStop: () => Effect.succeed(runAlone),
      })
      return { submit: queue.submit }
    }),
  )

  /** No batching: every request runs alone. */
  static readonly none = Layer.succeed(WriteBatcher, { submit: () => Effect.succeed(runAlone) })
}

// Another writer created a stream of the batch first: expected now and then, and not worth a warning.
const isConflict = (cause: Cause.Cause<unknown>) =>
  Cause.failures(cause).pipe(Chunk.some((error) => error instanceof StreamVersionConflict))

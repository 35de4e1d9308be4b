import { SqlClient } from "@effect/sql"
import { Cause, Chunk, Context, Deferred, Effect, Exit, Layer, Metric } from "effect"
import { InlineProjection } from "../event-store/inline-projection.js"
import { LogNotifier } from "../event-store/log-notifier.js"
import { StreamVersionConflict } from "../event-store/stream-version-conflict.js"
import {
  consumeRateLimitTogether,
  groupByBucket,
  type RateLimitAsk,
} from "../rate-limit/coalesced-rate-limit.js"
import type { RateLimitDecision } from "../rate-limit/consume-rate-limit.js"
import { makeRoundQueue, type Pending as RoundPending } from "../runtime/round-queue.js"
import { keyIdOf } from "./batch-keys.js"
import { batchMetric } from "./batch-metrics.js"
import { type BatchEntry, type BatchResult, inProgress, runAlone, runBatch } from "./run-batch.js"

/** The most requests one batch writes: bounds the statements' arrays and the time the batch holds its locks. */
export const MAX_WRITE_BATCH_SIZE = 64

/** A request for the write batcher: a batch entry, and the rate limit it is to be admitted under, if any. */
export interface BatchRequest extends BatchEntry {
  /**
   * The bucket the request takes one cell of before its batch's transaction begins (its partner's rate
   * limit): refused, it is not written (RateLimited); the decision comes back with whatever became of it.
   */
  readonly rateLimit?: RateLimitAsk
}

/** What became of a request handed to the write batcher, with the rate-limit decision it was given, if any. */
export type BatchOutcome =
  | (BatchResult & { readonly rateLimit?: RateLimitDecision })
  | { readonly _tag: "RateLimited"; readonly rateLimit: RateLimitDecision }

type Pending = RoundPending<BatchRequest, BatchOutcome, never>

// The rate-limit decisions of a batch's requests, each bucket's requests decided together in one statement
// (in arrival order, as one at a time would), outside the batch's transaction so that no bucket's row stays
// locked while the batch writes. A bucket whose statement failed leaves its requests undecided.
const admissionsOf = (requests: ReadonlyArray<BatchRequest>) =>
  Effect.gen(function* () {
    const decisions: Array<RateLimitDecision | undefined> = requests.map(() => undefined)
    // A few buckets at once: a batch of many partners does not wait for their statements one after another.
    yield* Effect.forEach(
      groupByBucket(requests.keys(), (n) => requests[n]?.rateLimit),
      ({ ask, members }) =>
        Effect.gen(function* () {
          const decided = yield* Effect.either(consumeRateLimitTogether(ask.key, ask.policy, members.length))
          if (decided._tag === "Left") {
            return yield* Effect.logWarning(
              "a write batch's rate-limit statement failed; its requests run alone",
              decided.left,
            )
          }
          members.forEach((n, i) => {
            decisions[n] = decided.right[i]
          })
        }),
      { concurrency: 4, discard: true },
    )
    return decisions
  })

/**
 * Group commit of idempotent writes: the requests that arrive while a batch is being written are written
 * together in the next one (runBatch), one transaction, one commit and a handful of statements for all of
 * them, instead of each its own. Nothing waits for a batch to fill: a lone request is a batch of one. A
 * request the batch leaves out (RunAlone) is then run on its own by the caller; one whose key an earlier
 * request of the batch had is answered IK1002 by the caller (InProgress); one its rate limit refused before
 * the batch (RateLimited) was not written.
 */
export class WriteBatcher extends Context.Tag("@points/infrastructure/WriteBatcher")<
  WriteBatcher,
  { readonly submit: (request: BatchRequest) => Effect.Effect<BatchOutcome> }
>() {
  /** One batching fiber per process, for as long as the layer lives. */
  static readonly layer = Layer.scoped(
    WriteBatcher,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const projection = yield* InlineProjection
      const notifier = yield* LogNotifier

      // The keys of this process's requests queued or being written, and whether
      // the request is executing (its batch found the key new). Any request with the key of one that
      // executes (DESIGN.md section 4: one that arrives while it runs) is in progress, 409 IK1002 at once, not
      // queued behind it: the same request again, or another with its key (the first may yet fail unrecorded
      // and free the key, so IK1001 would say too much). While the first is only queued, whether its key is
      // new or recorded is not known yet, so a request with the key queues too: a retry of a recorded
      // request is replayed, and another request with a recorded key is refused IK1001. Across processes,
      // the key's lock does the same (lockKeys).
      const inFlight = new Map<string, { executing: boolean }>()
      const idOf = ({ claim }: BatchEntry) => keyIdOf(claim.partnerId, claim.key)
      // Marks the requests of these entries executing, or done.
      const executing = (value: boolean) => (entries: ReadonlyArray<BatchEntry>) => {
        for (const entry of entries) {
          const running = inFlight.get(idOf(entry))
          if (running !== undefined) running.executing = value
        }
      }

      const writeBatch = (batch: ReadonlyArray<Pending>) =>
        Effect.gen(function* () {
          const decisions = yield* admissionsOf(batch.map((pending) => pending.item))
          // A request asking for a rate limit is written only once allowed (a failed decision: it runs alone).
          const outcomes: Array<BatchOutcome | undefined> = batch.map((pending, n) => {
            const decision = decisions[n]
            if (pending.item.rateLimit === undefined) return undefined
            if (decision === undefined) return runAlone
            return decision.allowed ? undefined : { _tag: "RateLimited", rateLimit: decision }
          })
          const admitted = batch.flatMap((_, n) => (outcomes[n] === undefined ? [n] : []))
          const entries = admitted.map((n) => (batch[n] as Pending).item)
          const exit = yield* Effect.exit(
            admitted.length === 0
              ? Effect.succeed([])
              : sql
                  .withTransaction(runBatch(entries, executing(true)))
                  .pipe(Effect.provideService(InlineProjection, projection)),
          )
          executing(false)(entries)
          if (Exit.isFailure(exit) && !isConflict(exit.cause)) {
            yield* Effect.logWarning("a write batch rolled back; its requests run one by one", exit.cause)
          }
          admitted.forEach((n, i) => {
            const result = Exit.isSuccess(exit) ? (exit.value[i] ?? runAlone) : runAlone
            const decision = decisions[n]
            outcomes[n] = decision === undefined ? result : { ...result, rateLimit: decision }
          })
          const count = (tag: BatchOutcome["_tag"]) =>
            outcomes.filter((outcome) => outcome?._tag === tag).length
          const committed = count("Committed")
          if (admitted.length > 0) {
            yield* Metric.increment(batchMetric.batches(Exit.isSuccess(exit) ? "committed" : "rolled_back"))
          }
          yield* Metric.incrementBy(batchMetric.requests("committed"), committed)
          yield* Metric.incrementBy(batchMetric.requests("in_progress"), count("InProgress"))
          yield* Metric.incrementBy(batchMetric.requests("run_alone"), count("RunAlone"))
          yield* Metric.incrementBy(batchMetric.requests("rate_limited"), count("RateLimited"))
          if (committed > 0) yield* notifier.committed
          yield* Effect.forEach(
            batch,
            (pending, n) => Deferred.succeed(pending.done, outcomes[n] ?? runAlone),
            {
              discard: true,
            },
          )
        })
      // Once the layer is released, requests still queued and every later one run alone.
      const queue = yield* makeRoundQueue<BatchRequest, BatchOutcome, never, SqlClient.SqlClient>({
        maxRound: MAX_WRITE_BATCH_SIZE,
        round: writeBatch,
        leftover: (left) =>
          Effect.forEach(left, (pending) => Deferred.succeed(pending.done, runAlone), { discard: true }),
        afterStop: (): Effect.Effect<BatchOutcome> => Effect.succeed(runAlone),
      })
      const submit = (request: BatchRequest): Effect.Effect<BatchOutcome> =>
        Effect.suspend(() => {
          const id = idOf(request)
          const running = inFlight.get(id)
          if (running !== undefined) {
            return running.executing ? Effect.succeed(inProgress) : queue.submit(request)
          }
          inFlight.set(id, { executing: false })
          return Effect.ensuring(
            queue.submit(request),
            Effect.sync(() => inFlight.delete(id)),
          )
        })
      return { submit }
    }),
  )

  /** No batching: every request runs alone. */
  static readonly none = Layer.succeed(WriteBatcher, { submit: () => Effect.succeed(runAlone) })
}

// Another writer created a stream of the batch first: expected now and then, and not worth a warning.
const isConflict = (cause: Cause.Cause<unknown>) =>
  Cause.failures(cause).pipe(Chunk.some((error) => error instanceof StreamVersionConflict))

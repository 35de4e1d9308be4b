import { SqlClient } from "@effect/sql"
import { Cause, Duration, Effect, Either, FiberSet, Metric, Queue, Ref, Schedule } from "effect"
import { LogListener } from "../consumers/log-listener.js"
import type { InlineProjection } from "../event-store/inline-projection.js"
import type { LogNotifier } from "../event-store/log-notifier.js"
import { uuidV7 } from "../ids/uuid-v7.js"
import { attemptDelivery, notMade } from "./attempt-delivery.js"
import { type ClaimedDelivery, claimDueDeliveries, untilNextDue } from "./claim-deliveries.js"
import { endLease, recordCutOff, STOPPED_ERROR, STOPPING_LOCK_WAIT } from "./cut-off-attempts.js"
import { attemptsRecorded, listAttemptOutcomes } from "./delivery-metrics.js"
import { notAttemptedBecause } from "./disable-endpoint.js"
import { type DispatcherOptions, type DispatcherSettings, dispatcherSettings } from "./dispatcher-options.js"
import { recordAttempt } from "./record-attempt.js"

// The shortest wait between two looks for due attempts: an attempt falling due a moment from now is claimed
// at the next look, not spun for.
const MIN_WAIT = Duration.millis(10)

// A failed record (the database out of reach) is tried again a few times; after that the lease runs out
// and the attempt is made again: at least once.
const recordRetry = Schedule.exponential("200 millis").pipe(Schedule.intersect(Schedule.recurs(4)))

// The endpoints that answered 410 Gone to this dispatcher and whose disabling is still being recorded, with
// how many such answers are: an attempt of theirs claimed meanwhile (the claim still saw them enabled) is not
// made. Once the disabling commits, no attempt of theirs is claimed.
type GoneEndpoints = Map<string, number>

const NOT_ATTEMPTED_GONE = notMade(notAttemptedBecause("gone"))

const deliverOne = (claim: ClaimedDelivery, settings: DispatcherSettings, gone: GoneEndpoints) => {
  const endpoint = claim.endpoint_id
  let answeredGone = false
  const attempt = Effect.suspend(() =>
    gone.has(endpoint) ? Effect.succeed(NOT_ATTEMPTED_GONE) : attemptDelivery(claim, settings),
  ).pipe(
    Effect.tap((result) =>
      Effect.sync(() => {
        if (result.disable !== "gone") return
        answeredGone = true
        gone.set(endpoint, (gone.get(endpoint) ?? 0) + 1)
      }),
    ),
  )
  const recorded = Effect.sync(() => {
    if (!answeredGone) return
    const left = (gone.get(endpoint) ?? 1) - 1
    if (left === 0) gone.delete(endpoint)
    else gone.set(endpoint, left)
  })
  return attempt.pipe(
    // Stopped mid-attempt: recorded as an attempt of its own, the next one made at once by whoever claims it.
    Effect.onInterrupt(() =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(recordCutOff(claim, STOPPED_ERROR, STOPPING_LOCK_WAIT)).pipe(
          // Its endpoint held: the lease ends now, and the next claim records it (as lapsed) once it can.
          Effect.catchAll(() => endLease(claim)),
          Effect.ignore,
        ),
      ),
    ),
    Effect.flatMap((result) =>
      recordAttempt(claim, result, settings).pipe(
        (record) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(record)),
        Effect.retry(recordRetry),
        // Never interrupt a statement in flight (see log-listener.ts); a stop waits for the record.
        Effect.uninterruptible,
        Effect.tap((recorded) =>
          Metric.increment(attemptsRecorded(recorded ? result.status : "lost")).pipe(
            Effect.zipRight(
              Effect.logDebug("webhook attempt").pipe(
                Effect.annotateLogs({
                  event_id: claim.event_id,
                  endpoint_id: claim.endpoint_id,
                  attempt: claim.attempt,
                  status: recorded ? result.status : "lost",
                  response_status: result.responseStatus ?? "none",
                }),
              ),
            ),
          ),
        ),
      ),
    ),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.void
        : Effect.logWarning("webhook attempt not recorded; it is made again after its lease", cause),
    ),
    Effect.ensuring(recorded),
  )
}

/**
 * Delivers due webhook attempts until interrupted (fork it). Any number of dispatchers, in any processes,
 * share the work: each claims due attempts (`SKIP LOCKED`, with a lease longer than the send timeout) up to
 * its free concurrency, partners taking turns and none above its share in flight, makes them, and records each (scheduling the next attempt after a failure). It wakes
 * when an attempt ends, on the NOTIFY that fan-out sends (through the process's LogListener), when the next
 * scheduled attempt falls due, and at least every poll interval. Bad options are a defect, reported at once.
 */
export const runWebhookDispatcher = (
  options: DispatcherOptions = {},
): Effect.Effect<never, never, SqlClient.SqlClient | LogListener | InlineProjection | LogNotifier> =>
  Effect.gen(function* () {
    const checked = dispatcherSettings(options)
    if (Either.isLeft(checked)) return yield* Effect.dieMessage(`webhook dispatcher: ${checked.left}`)
    const settings = checked.right
    yield* listAttemptOutcomes
    const instance = options.instanceId ?? `dispatcher-${uuidV7()}`
    const listener = yield* LogListener
    const attempts = yield* FiberSet.make<void>()
    const inFlight = yield* Ref.make(0)
    const wake = yield* Queue.sliding<void>(1)
    const gone: GoneEndpoints = new Map()

    const notices = yield* listener.subscribe
    yield* Queue.take(notices).pipe(
      Effect.zipRight(Queue.offer(wake, undefined)),
      Effect.forever,
      Effect.forkScoped,
    )

    // Interruptible, though started in the claim's uninterruptible region: a stop cuts an attempt off.
    const start = (claim: ClaimedDelivery) =>
      FiberSet.run(
        attempts,
        deliverOne(claim, settings, gone).pipe(
          Effect.ensuring(
            Effect.zipRight(
              Ref.update(inFlight, (n) => n - 1),
              Queue.offer(wake, undefined),
            ),
          ),
          Effect.interruptible,
        ),
      )

    const step = Effect.gen(function* () {
      yield* Queue.takeAll(wake)
      const free = settings.concurrency - (yield* Ref.get(inFlight))
      if (free > 0) {
        // Claimed and started as one: a stop between the two would leave attempts leased that nothing makes
        // or records until their lease runs out.
        const claimed = yield* Effect.uninterruptible(
          Effect.gen(function* () {
            const claimed = yield* claimDueDeliveries({
              limit: free,
              perPartner: settings.perPartnerConcurrency,
              lease: settings.lease,
              token: `${instance}/${uuidV7()}`,
            })
            yield* Ref.update(inFlight, (n) => n + claimed.length)
            yield* Effect.forEach(claimed, start, { discard: true })
            return claimed
          }),
        )
        // As many as asked for: more may be due.
        if (claimed.length === free) return
      }
      const due =
        free > 0 ? yield* untilNextDue(settings.perPartnerConcurrency).pipe(Effect.uninterruptible) : null
      const wait =
        due === null
          ? settings.pollInterval
          : Duration.max(Duration.min(due, settings.pollInterval), MIN_WAIT)
      yield* Queue.take(wake).pipe(Effect.timeoutOption(wait))
    })

    yield* Effect.logInfo("webhook dispatcher started").pipe(Effect.annotateLogs({ instance }))
    return yield* step.pipe(
      Effect.tapErrorCause((cause) => Effect.logWarning("webhook dispatcher step failed; retrying", cause)),
      Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("10 seconds")))),
      Effect.forever,
      Effect.orDie,
    )
  }).pipe(Effect.scoped, Effect.annotateLogs({ component: "webhook-dispatcher" }))

import type { SqlError } from "@effect/sql"
import { SqlClient } from "@effect/sql"
import { Chunk, Deferred, Effect, Exit, FiberId, Queue } from "effect"
import {
  consumeRateLimit,
  consumeRateLimitCells,
  type RateLimitDecision,
  rateLimitDecisionOf,
} from "./consume-rate-limit.js"
import { gcraOf, type RateLimitPolicy } from "./rate-limit-policy.js"

/** The most requests one round of the coalescing limiter takes from its queue. */
export const MAX_COALESCED_REQUESTS = 256

interface Pending {
  readonly key: string
  readonly policy: RateLimitPolicy
  readonly done: Deferred.Deferred<RateLimitDecision, SqlError.SqlError>
}

// The requests of one key and policy in a round, in arrival order: one statement takes them all at once when
// the bucket holds them all (request i then ran ahead by i + 1 - n emissions less than the last); otherwise
// each is decided alone, in order, exactly as without coalescing.
const settle = (group: ReadonlyArray<Pending>) =>
  Effect.gen(function* () {
    const first = group[0]
    if (first === undefined) return []
    const { key, policy } = first
    if (group.length === 1) return [yield* consumeRateLimit(key, policy)]
    const together = yield* consumeRateLimitCells(key, policy, group.length)
    if (!together.allowed) return yield* Effect.forEach(group, () => consumeRateLimit(key, policy))
    const { emissionMicros } = gcraOf(policy)
    return group.map((_, i) =>
      rateLimitDecisionOf(policy, true, together.backlogMicros - (group.length - 1 - i) * emissionMicros),
    )
  })

/**
 * A rate limiter that takes the concurrent requests of one key together: while one round of statements runs,
 * the requests that arrive queue, and the next round takes each key's queued requests in one statement
 * (`consumeRateLimitCells`) when its bucket holds them all, deciding each exactly as one at a time would.
 * A request alone is one statement, as `consumeRateLimit`. Scoped: its fiber stops with the scope, and after
 * that every request is decided alone (a server still finishing its requests goes on being limited).
 */
export const makeCoalescedRateLimit = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const queue = yield* Queue.unbounded<Pending>()
  // Once the scope closes, requests are decided one by one, as without coalescing: the server may still be
  // finishing requests that have yet to ask (a request offered to a queue nobody takes would wait forever).
  let stopped = false
  const settleAll = (pending: ReadonlyArray<Pending>) => {
    const groups = new Map<string, Array<Pending>>()
    for (const request of pending) {
      const id = `${request.policy.ratePerSecond}/${request.policy.burst} ${request.key}`
      const group = groups.get(id) ?? []
      group.push(request)
      groups.set(id, group)
    }
    return Effect.forEach(
      groups.values(),
      (group) =>
        Effect.flatMap(Effect.exit(settle(group)), (exit) =>
          Effect.forEach(
            group,
            (request, i) =>
              Deferred.done(
                request.done,
                Exit.map(exit, (decisions) => decisions[i] as RateLimitDecision),
              ),
            { discard: true },
          ),
        ),
      { concurrency: "unbounded", discard: true },
    ).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  }
  // What a round took is settled whole, never interrupted half-way: a statement interrupted in flight would
  // be cancelled on its connection, and a request taken but not answered would wait forever.
  const round = Effect.flatMap(Queue.takeBetween(queue, 1, MAX_COALESCED_REQUESTS), (pending) =>
    Effect.uninterruptible(settleAll(Chunk.toReadonlyArray(pending))),
  )
  yield* Effect.forkScoped(Effect.forever(round))
  // Requests still queued when the scope closes are decided too, and so is every later one (see `stopped`).
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      stopped = true
      return Effect.flatMap(Queue.takeAll(queue), (left) => settleAll(Chunk.toReadonlyArray(left)))
    }),
  )
  return {
    /** Takes one request from `key`'s bucket under `policy` (see consumeRateLimit). */
    consume: (key: string, policy: RateLimitPolicy) =>
      Effect.suspend(() => {
        if (stopped)
          return consumeRateLimit(key, policy).pipe(Effect.provideService(SqlClient.SqlClient, sql))
        // Checked and queued in one synchronous step: the finalizer cannot slip in between and leave it queued.
        const done = Deferred.unsafeMake<RateLimitDecision, SqlError.SqlError>(FiberId.none)
        queue.unsafeOffer({ key, policy, done })
        return Deferred.await(done)
      }),
  }
})

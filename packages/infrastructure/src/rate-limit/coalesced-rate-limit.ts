import type { SqlError } from "@effect/sql"
import { SqlClient } from "@effect/sql"
import { Chunk, Deferred, Effect, Exit, Queue } from "effect"
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
 * A request alone is one statement, as `consumeRateLimit`. Scoped: its fiber stops with the scope.
 */
export const makeCoalescedRateLimit = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const queue = yield* Queue.unbounded<Pending>()
  const round = Effect.gen(function* () {
    const pending = Chunk.toReadonlyArray(yield* Queue.takeBetween(queue, 1, MAX_COALESCED_REQUESTS))
    const groups = new Map<string, Array<Pending>>()
    for (const request of pending) {
      const id = `${request.policy.ratePerSecond}/${request.policy.burst} ${request.key}`
      const group = groups.get(id) ?? []
      group.push(request)
      groups.set(id, group)
    }
    yield* Effect.forEach(
      groups.values(),
      (group) =>
        // Never interrupted half-way: a statement interrupted in flight would be cancelled on its connection.
        Effect.flatMap(Effect.exit(Effect.uninterruptible(settle(group))), (exit) =>
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
    )
  }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  yield* Effect.forkScoped(Effect.forever(round))
  // Requests still queued when the scope closes (the server has finished its requests by then) are told so.
  yield* Effect.addFinalizer(() =>
    Effect.flatMap(Queue.takeAll(queue), (left) =>
      Effect.forEach(left, (request) => Deferred.die(request.done, new Error("the rate limiter stopped")), {
        discard: true,
      }),
    ),
  )
  return {
    /** Takes one request from `key`'s bucket under `policy` (see consumeRateLimit). */
    consume: (key: string, policy: RateLimitPolicy) =>
      Effect.flatMap(Deferred.make<RateLimitDecision, SqlError.SqlError>(), (done) =>
        Effect.zipRight(Queue.offer(queue, { key, policy, done }), Deferred.await(done)),
      ),
  }
})

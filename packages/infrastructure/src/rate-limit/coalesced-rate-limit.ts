import type { SqlError } from "@effect/sql"
import { SqlClient } from "@effect/sql"
import { Deferred, Effect, Exit } from "effect"
import { makeRoundQueue, type Pending as RoundPending } from "../runtime/round-queue.js"
import {
  consumeRateLimit,
  consumeRateLimitCells,
  type RateLimitDecision,
  rateLimitDecisionOf,
} from "./consume-rate-limit.js"
import { gcraOf, type RateLimitPolicy } from "./rate-limit-policy.js"

/** The most requests one round of the coalescing limiter takes from its queue. */
export const MAX_COALESCED_REQUESTS = 256

/** What a request asks of a limiter: one cell of its key's bucket under a policy. */
export interface RateLimitAsk {
  readonly key: string
  readonly policy: RateLimitPolicy
}

type Pending = RoundPending<RateLimitAsk, RateLimitDecision, SqlError.SqlError>

/**
 * Decides `count` requests of one key and policy, in arrival order, as one at a time would: one statement takes
 * them all at once when the bucket holds them all (request i then ran ahead by i + 1 - n emissions less than
 * the last); otherwise each is decided alone, in order.
 */
export const consumeRateLimitTogether = (key: string, policy: RateLimitPolicy, count: number) =>
  Effect.gen(function* () {
    if (count <= 0) return []
    if (count === 1) return [yield* consumeRateLimit(key, policy)]
    const together = yield* consumeRateLimitCells(key, policy, count)
    if (!together.allowed) {
      return yield* Effect.forEach(Array.from({ length: count }), () => consumeRateLimit(key, policy))
    }
    const { emissionMicros } = gcraOf(policy)
    return Array.from({ length: count }, (_, i) =>
      rateLimitDecisionOf(policy, true, together.backlogMicros - (count - 1 - i) * emissionMicros),
    )
  })

// The bucket a request takes a cell of: its key under its policy (one key may be limited by two policies).
const bucketIdOf = (key: string, policy: RateLimitPolicy) => `${policy.ratePerSecond}/${policy.burst} ${key}`

/**
 * Items grouped by the bucket they ask a cell of (`askOf`; an item asking none is left out), each group with
 * its ask and its members in the order given: what `consumeRateLimitTogether` decides at once.
 */
export const groupByBucket = <T>(items: Iterable<T>, askOf: (item: T) => RateLimitAsk | undefined) => {
  const groups = new Map<string, { readonly ask: RateLimitAsk; readonly members: Array<T> }>()
  for (const item of items) {
    const ask = askOf(item)
    if (ask === undefined) continue
    const id = bucketIdOf(ask.key, ask.policy)
    const group = groups.get(id) ?? { ask, members: [] }
    group.members.push(item)
    groups.set(id, group)
  }
  return [...groups.values()]
}

/**
 * A rate limiter that takes the concurrent requests of one key together: while one round of statements runs,
 * the requests that arrive queue, and the next round takes each key's queued requests in one statement
 * (`consumeRateLimitCells`) when its bucket holds them all, deciding each exactly as one at a time would.
 * A request alone is one statement, as `consumeRateLimit`. Scoped: its fiber stops with the scope, and after
 * that every request is decided alone (a server still finishing its requests goes on being limited).
 */
export const makeCoalescedRateLimit = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const settleAll = (pending: ReadonlyArray<Pending>) =>
    Effect.forEach(
      groupByBucket(pending, (request) => request.item),
      ({ ask, members }) =>
        Effect.flatMap(Effect.exit(consumeRateLimitTogether(ask.key, ask.policy, members.length)), (exit) =>
          Effect.forEach(
            members,
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
  // Once the scope closes, requests are decided one by one, as without coalescing.
  const queue = yield* makeRoundQueue({
    maxRound: MAX_COALESCED_REQUESTS,
    round: settleAll,
    leftover: settleAll,
    afterStop: ({ key, policy }: RateLimitAsk) =>
      consumeRateLimit(key, policy).pipe(Effect.provideService(SqlClient.SqlClient, sql)),
  })
  return {
    /** Takes one request from `key`'s bucket under `policy` (see consumeRateLimit). */
    consume: (key: string, policy: RateLimitPolicy) => queue.submit({ key, policy }),
  }
})

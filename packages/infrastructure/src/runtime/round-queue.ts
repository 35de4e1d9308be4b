import { Chunk, Deferred, Effect, FiberId, Queue, type Scope } from "effect"

/** A request in a RoundQueue: what was submitted, and where its answer goes. */
export interface Pending<I, A, E> {
  readonly item: I
  readonly done: Deferred.Deferred<A, E>
}

/**
 * A queue that one fiber drains in rounds of 1 to `maxRound` requests for as long as the scope lives, each
 * round handled whole and never interrupted half-way (a statement interrupted in flight would be cancelled on
 * its connection, and a request taken but not answered would wait forever). `round` answers every request
 * it gets. When the scope closes, the requests still queued go to `leftover`, and every later one to
 * `afterStop` at once: a server still finishing its requests never waits on a queue nobody drains.
 */
export const makeRoundQueue = <I, A, E, R>(options: {
  readonly maxRound: number
  readonly round: (pending: ReadonlyArray<Pending<I, A, E>>) => Effect.Effect<void, never, R>
  readonly leftover: (pending: ReadonlyArray<Pending<I, A, E>>) => Effect.Effect<void, never, R>
  readonly afterStop: (item: I) => Effect.Effect<A, E>
}): Effect.Effect<{ readonly submit: (item: I) => Effect.Effect<A, E> }, never, Scope.Scope | R> =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Pending<I, A, E>>()
    let stopped = false
    const round = Effect.flatMap(Queue.takeBetween(queue, 1, options.maxRound), (pending) =>
      Effect.uninterruptible(options.round(Chunk.toReadonlyArray(pending))),
    )
    yield* Effect.forkScoped(Effect.forever(round))
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        stopped = true
        return Effect.flatMap(Queue.takeAll(queue), (left) => options.leftover(Chunk.toReadonlyArray(left)))
      }),
    )
    return {
      submit: (item: I) =>
        Effect.suspend(() => {
          if (stopped) return options.afterStop(item)
          // Checked and queued in one synchronous step: the finalizer cannot slip in between.
          const done = Deferred.unsafeMake<A, E>(FiberId.none)
          queue.unsafeOffer({ item, done })
          return Deferred.await(done)
        }),
    }
  })

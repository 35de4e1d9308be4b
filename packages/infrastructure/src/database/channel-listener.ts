import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Data, Deferred, Duration, Effect, Queue, Ref, Schedule, type Scope, Stream } from "effect"
import { uuidV7 } from "../ids/uuid-v7.js"

/** The LISTEN connection did not hear this process's own NOTIFY in time. */
export class ChannelDeaf extends Data.TaggedError("ChannelDeaf")<{
  readonly channel: string
  readonly waited: Duration.Duration
}> {
  override get message() {
    return `LISTEN ${this.channel} heard nothing within ${Duration.format(this.waited)}`
  }
}

/** How a channel listener checks that it still hears. */
export interface ChannelListenerOptions {
  /** How long it waits to hear its own NOTIFY before it counts as deaf (default 5 seconds). */
  readonly confirmWithin?: Duration.DurationInput
  /** How often a live listener checks again (default 30 seconds). */
  readonly checkEvery?: Duration.DurationInput
}

/** What a channel listener does with what it hears. */
export interface ChannelHandlers<R> {
  /** Every payload NOTIFYed on the channel, the listener's own checks (`listener:...`) included. */
  readonly onPayload: (payload: string) => Effect.Effect<void, never, R>
  /**
   * Each time a subscription is confirmed: at start, and again after a deaf spell, during which notifications
   * may have been lost.
   */
  readonly onHearing: Effect.Effect<void, never, R>
  /** What a deaf spell means for the process, for the warning it logs. */
  readonly whileDeaf: string
}

/**
 * Listens on a channel for as long as the scope lives, and returns once the LISTEN is confirmed (or after
 * `confirmWithin`). The listener proves it hears by receiving its own NOTIFY, at start and then periodically,
 * and starts over on a fresh connection when it does not: a LISTEN connection that died reports no error.
 * @effect/sql-pg runs every listen of a client on one connection, and a stream that ends sends UNLISTEN for
 * its channel: one listener per channel and process.
 */
export const listenOnChannel = <R>(
  channel: string,
  options: ChannelListenerOptions,
  handlers: ChannelHandlers<R>,
): Effect.Effect<void, never, Scope.Scope | SqlClient.SqlClient | PgClient.PgClient | R> =>
  Effect.gen(function* () {
    const confirmWithin = Duration.decode(options.confirmWithin ?? "5 seconds")
    const checkEvery = Duration.decode(options.checkEvery ?? "30 seconds")
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const instance = `listener:${uuidV7()}`
    const heard = yield* Queue.sliding<string>(16)
    const checks = yield* Ref.make(0)
    const ready = yield* Deferred.make<void>()

    // Sends NOTIFYs with a fresh payload every 50 ms until one comes back (those sent before the LISTEN took
    // effect are lost). Not PgClient.notify: it sends `NOTIFY channel, $1`, and NOTIFY takes no parameters.
    const confirm = Effect.gen(function* () {
      const payload = `${instance}:${yield* Ref.updateAndGet(checks, (n) => n + 1)}`
      const echo = Queue.take(heard).pipe(Effect.repeat({ until: (p) => p === payload }))
      // Each NOTIFY is uninterruptible: when the echo wins the race, an interrupted query would make
      // @effect/sql-pg send pg_cancel_backend for its connection, and if the query had just finished, that
      // connection is back in the pool and the cancel hits another request's statement (seen in tests).
      const send = sql`SELECT pg_notify(${channel}, ${payload})`.pipe(
        Effect.uninterruptible,
        Effect.repeat(Schedule.spaced("50 millis")),
        Effect.zipRight(Effect.never),
      )
      yield* Effect.race(echo, send).pipe(
        Effect.timeoutFail({
          duration: confirmWithin,
          onTimeout: () => new ChannelDeaf({ channel, waited: confirmWithin }),
        }),
      )
    })

    // One subscription, checked until it goes deaf; its scope then ends it (UNLISTEN, and the connection is
    // closed once nothing else listens on it), and the next one starts on a fresh connection.
    const listen = Effect.scoped(
      Effect.gen(function* () {
        yield* pg.listen(channel).pipe(
          Stream.runForEach((payload) =>
            Effect.zipRight(
              handlers.onPayload(payload),
              payload.startsWith(instance) ? Queue.offer(heard, payload) : Effect.void,
            ),
          ),
          Effect.forkScoped,
        )
        yield* confirm
        yield* handlers.onHearing
        yield* Deferred.succeed(ready, undefined)
        return yield* confirm.pipe(Effect.repeat(Schedule.spaced(checkEvery)), Effect.zipRight(Effect.never))
      }),
    )
    yield* listen.pipe(
      // Also through defects: closing a subscription whose connection died throws from its UNLISTEN.
      Effect.sandbox,
      Effect.tapError((cause) =>
        Effect.logWarning(`LISTEN ${channel} is deaf; ${handlers.whileDeaf} until it is back`, cause),
      ),
      Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced(checkEvery)))),
      Effect.ignore,
      Effect.forkScoped,
    )
    yield* Deferred.await(ready).pipe(Effect.timeout(confirmWithin), Effect.ignore)
  })

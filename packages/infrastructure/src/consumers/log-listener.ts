import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import {
  Context,
  Data,
  Deferred,
  Duration,
  Effect,
  Layer,
  PubSub,
  Queue,
  Ref,
  Schedule,
  type Scope,
  Stream,
} from "effect"
import { LOG_CHANNEL } from "../event-store/log-notifier.js"
import { uuidV7 } from "../ids/uuid-v7.js"

/** The LISTEN connection did not hear this process's own NOTIFY in time. */
export class LogListenerDeaf extends Data.TaggedError("LogListenerDeaf")<{
  readonly waited: Duration.Duration
}> {
  override get message() {
    return `LISTEN ${LOG_CHANNEL} heard nothing within ${Duration.format(this.waited)}`
  }
}

/** How a LogListener checks that it still hears. */
export interface LogListenerOptions {
  /** How long it waits to hear its own NOTIFY before it counts as deaf (default 5 seconds). */
  readonly confirmWithin?: Duration.DurationInput
  /** How often a live listener checks again (default 30 seconds). */
  readonly checkEvery?: Duration.DurationInput
}

const make = (options: LogListenerOptions) =>
  Effect.gen(function* () {
    const confirmWithin = Duration.decode(options.confirmWithin ?? "5 seconds")
    const checkEvery = Duration.decode(options.checkEvery ?? "30 seconds")
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const signals = yield* PubSub.sliding<void>(1)
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
      const send = sql`SELECT pg_notify(${LOG_CHANNEL}, ${payload})`.pipe(
        Effect.uninterruptible,
        Effect.repeat(Schedule.spaced("50 millis")),
        Effect.zipRight(Effect.never),
      )
      yield* Effect.race(echo, send).pipe(
        Effect.timeoutFail({
          duration: confirmWithin,
          onTimeout: () => new LogListenerDeaf({ waited: confirmWithin }),
        }),
      )
    })

    // One subscription, checked until it goes deaf; its scope then ends it (UNLISTEN, and the connection is
    // closed once nothing else listens on it), and the next one starts on a fresh connection.
    const listen = Effect.scoped(
      Effect.gen(function* () {
        yield* pg.listen(LOG_CHANNEL).pipe(
          Stream.runForEach((payload) =>
            Effect.zipRight(
              PubSub.publish(signals, undefined),
              payload.startsWith(instance) ? Queue.offer(heard, payload) : Effect.void,
            ),
          ),
          Effect.forkScoped,
        )
        yield* confirm
        yield* Deferred.succeed(ready, undefined)
        return yield* confirm.pipe(Effect.repeat(Schedule.spaced(checkEvery)), Effect.zipRight(Effect.never))
      }),
    )
    yield* listen.pipe(
      // Also through defects: closing a subscription whose connection died throws from its UNLISTEN.
      Effect.sandbox,
      Effect.tapError((cause) => Effect.logWarning("LISTEN is deaf; consumers poll until it is back", cause)),
      Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced(checkEvery)))),
      Effect.ignore,
      Effect.forkScoped,
    )
    yield* Deferred.await(ready).pipe(Effect.timeout(confirmWithin), Effect.ignore)
    return { subscribe: PubSub.subscribe(signals) }
  })

/**
 * One LISTEN on LOG_CHANNEL per process, shared by all its consumers: each subscription is a flag that a
 * NOTIFY raises (a sliding queue of one). Shared because @effect/sql-pg runs every listen of a client on one
 * connection and a stream that ends sends UNLISTEN for the channel, which would deafen the other consumers.
 * The listener proves it hears by receiving its own NOTIFY, at start and then periodically, and starts over
 * on a fresh connection when it does not: a LISTEN connection that died reports no error. NOTIFY only
 * shortens waits; consumers poll regardless, so a deaf listener delays and never loses.
 */
export class LogListener extends Context.Tag("@points/infrastructure/LogListener")<
  LogListener,
  { readonly subscribe: Effect.Effect<Queue.Dequeue<void>, never, Scope.Scope> }
>() {
  /** Listens for as long as the layer lives; ready once it heard itself (or after confirmWithin, polling). */
  static readonly layerWith = (options: LogListenerOptions) => Layer.scoped(LogListener, make(options))

  /** A listener with the default checks: confirmed within 5 s, checked every 30 s. */
  static readonly layer = LogListener.layerWith({})
}

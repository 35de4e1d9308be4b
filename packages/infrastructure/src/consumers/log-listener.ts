import { Context, Effect, Layer, PubSub, type Queue, type Scope } from "effect"
import { type ChannelListenerOptions, listenOnChannel } from "../database/channel-listener.js"
import { LOG_CHANNEL } from "../event-store/log-notifier.js"

/** How a LogListener checks that it still hears (see listenOnChannel). */
export type LogListenerOptions = ChannelListenerOptions

/**
 * What a LogListener hears: a payload NOTIFYed on LOG_CHANNEL, or that it hears again after a deaf spell (or
 * for the first time), when payloads may have been lost.
 */
export type Heard = { readonly payload: string } | "hearing"

const make = (options: LogListenerOptions) =>
  Effect.gen(function* () {
    const signals = yield* PubSub.sliding<void>(1)
    // Unbounded: a subscriber that acts on payloads (the token cache) must not lose one to a burst.
    const heard = yield* PubSub.unbounded<Heard>()
    yield* listenOnChannel(LOG_CHANNEL, options, {
      onPayload: (payload) =>
        Effect.zipRight(PubSub.publish(signals, undefined), PubSub.publish(heard, { payload }), {
          concurrent: false,
        }).pipe(Effect.asVoid),
      onHearing: Effect.asVoid(PubSub.publish(heard, "hearing")),
      whileDeaf: "consumers poll, and a token revoked elsewhere works for the token cache's lifetime,",
    })
    return { subscribe: PubSub.subscribe(signals), subscribeHeard: PubSub.subscribe(heard) }
  })

/**
 * One LISTEN on LOG_CHANNEL per process, shared by all its consumers and by the token cache (revocations are
 * said on the same channel): each subscription is a flag that a NOTIFY raises (a sliding queue of one), or
 * every payload. One channel and one listener because @effect/sql-pg runs every listen of a client on one
 * connection and a stream that ends sends UNLISTEN for the channel, which would deafen the other consumers.
 * NOTIFY only shortens waits; consumers poll regardless, so a deaf listener delays and never loses.
 */
export class LogListener extends Context.Tag("@points/infrastructure/LogListener")<
  LogListener,
  {
    /** A flag raised by every NOTIFY (a sliding queue of one): for consumers, which then poll. */
    readonly subscribe: Effect.Effect<Queue.Dequeue<void>, never, Scope.Scope>
    /** Every payload heard, and every return to hearing: for those that act on what was said. */
    readonly subscribeHeard: Effect.Effect<Queue.Dequeue<Heard>, never, Scope.Scope>
  }
>() {
  /** Listens for as long as the layer lives; ready once it heard itself (or after confirmWithin, polling). */
  static readonly layerWith = (options: LogListenerOptions) => Layer.scoped(LogListener, make(options))

  /** A listener with the default checks: confirmed within 5 s, checked every 30 s. */
  static readonly layer = LogListener.layerWith({})
}

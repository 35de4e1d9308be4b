import { Context, Effect, Layer, PubSub, type Queue, type Scope } from "effect"
import { type ChannelListenerOptions, listenOnChannel } from "../database/channel-listener.js"
import { LOG_CHANNEL } from "../event-store/log-notifier.js"

/** How a LogListener checks that it still hears (see listenOnChannel). */
export type LogListenerOptions = ChannelListenerOptions

const make = (options: LogListenerOptions) =>
  Effect.gen(function* () {
    const signals = yield* PubSub.sliding<void>(1)
    yield* listenOnChannel(LOG_CHANNEL, options, {
      onPayload: () => Effect.asVoid(PubSub.publish(signals, undefined)),
      onHearing: Effect.void,
      whileDeaf: "consumers poll",
    })
    return { subscribe: PubSub.subscribe(signals) }
  })

/**
 * One LISTEN on LOG_CHANNEL per process, shared by all its consumers: each subscription is a flag that a
 * NOTIFY raises (a sliding queue of one). Shared because @effect/sql-pg runs every listen of a client on one
 * connection and a stream that ends sends UNLISTEN for the channel, which would deafen the other consumers.
 * NOTIFY only shortens waits; consumers poll regardless, so a deaf listener delays and never loses.
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

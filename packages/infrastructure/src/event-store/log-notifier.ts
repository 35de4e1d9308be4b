import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Queue } from "effect"

/** The channel consumers LISTEN on to hear that the log grew. */
export const LOG_CHANNEL = "points_events"

/**
 * Tells consumers that events were committed. NOTIFY inside a write transaction would take PostgreSQL's
 * global notify lock at commit and serialise every writer, so writers only raise a flag, and one fiber per
 * process sends a single NOTIFY per burst after their commits. A lost NOTIFY (a crash in between) only delays
 * consumers until their next poll.
 */
export class LogNotifier extends Context.Tag("@points/infrastructure/LogNotifier")<
  LogNotifier,
  { readonly committed: Effect.Effect<void> }
>() {
  /** Sends NOTIFY from a background fiber for as long as the layer lives. */
  static readonly layer = Layer.scoped(
    LogNotifier,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const pending = yield* Queue.sliding<void>(1)
      yield* Queue.take(pending).pipe(
        // A non-empty payload: @effect/sql-pg's listen drops notifications whose payload is empty.
        Effect.zipRight(sql`SELECT pg_notify(${LOG_CHANNEL}, 'committed')`),
        Effect.catchAllCause((cause) => Effect.logWarning("NOTIFY failed; consumers will poll", cause)),
        Effect.forever,
        Effect.forkScoped,
      )
      return { committed: Queue.offer(pending, undefined).pipe(Effect.asVoid) }
    }),
  )

  /** Notifies no one: consumers find new events by polling. */
  static readonly none = Layer.succeed(LogNotifier, { committed: Effect.void })
}

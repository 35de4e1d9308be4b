import { atInstant } from "@points/domain"
import { DateTime, type Effect } from "effect"

/**
 * Runs a decision with Effect's Clock pinned to a time the database gave. Leases and lifetimes are compared
 * across every API process, whose clocks drift apart; the database's clock is the one they all share, so a
 * key's times are read from `now()` in the transaction that writes them and handed to the decider here.
 */
export const atDatabaseTime =
  (now: DateTime.Utc) =>
  <A, E, R>(decision: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    atInstant(DateTime.toEpochMillis(now))(decision)

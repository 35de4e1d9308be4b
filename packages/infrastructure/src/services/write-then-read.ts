import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { LogNotifier } from "../event-store/log-notifier.js"

/**
 * Runs a write and the read of what it answers in one transaction, so a POST answers exactly the state it
 * made, as the matching GET would. Inside a caller's transaction (the idempotency record's) both simply run
 * in it: a savepoint would only cost a round trip, and a failure fails the caller's transaction (or savepoint)
 * anyway. Consumers are told after the commit: the unit of work's own notice went out when only its
 * savepoint was released, too early for them to see the events.
 */
export const writeThenRead = <A, E, R, B, E2, R2>(
  write: Effect.Effect<A, E, R>,
  read: (written: A) => Effect.Effect<B, E2, R2>,
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifier = yield* LogNotifier
    const nested = Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))
    const writeAndRead = Effect.flatMap(write, read)
    const result = yield* nested ? writeAndRead : sql.withTransaction(writeAndRead)
    yield* notifier.committed
    return result
  })

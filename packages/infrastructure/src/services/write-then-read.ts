import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { LogNotifier } from "../event-store/log-notifier.js"

/**
 * Runs a write and the read of what it answers in one transaction, so a POST answers exactly the state it
 * made, as the matching GET would. Inside a caller's transaction (the idempotency record's) both run in a
 * savepoint of it. Consumers are told after the commit: the unit of work's own notice went out when only its
 * savepoint was released, too early for them to see the events.
 */
export const writeThenRead = <A, E, R, B, E2, R2>(
  write: Effect.Effect<A, E, R>,
  read: (written: A) => Effect.Effect<B, E2, R2>,
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifier = yield* LogNotifier
    const result = yield* sql.withTransaction(Effect.flatMap(write, read))
    yield* notifier.committed
    return result
  })

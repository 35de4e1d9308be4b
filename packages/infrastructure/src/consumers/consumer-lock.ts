import { SqlClient, type SqlConnection } from "@effect/sql"
import { Data, type Duration, Effect, Metric, Schedule } from "effect"
import { isSessionEnded } from "../database/sql-state.js"
import { consumerMetric } from "./consumer-metrics.js"

/** The connection holding a consumer's lock failed: the lock is gone, and another instance may take over. */
export class ConsumerLockLost extends Data.TaggedError("ConsumerLockLost")<{
  readonly consumer: string
  readonly cause: unknown
}> {
  override get message() {
    return `consumer ${this.consumer} lost the connection that held its lock`
  }
}

// A 64-bit hash of the name, so two consumers' names practically never share a lock (with hashtext's 32 bits
// a collision would keep one of them from ever running while the other does).
const lockKey = "hashtextextended('consumer:' || $1, 0)"

const tryLock = (connection: SqlConnection.Connection, consumer: string) =>
  Effect.map(
    connection.execute(`SELECT pg_try_advisory_lock(${lockKey}) AS locked`, [consumer], undefined),
    (rows) => (rows[0] as { locked: boolean } | undefined)?.locked === true,
  )

const unlock = (connection: SqlConnection.Connection, consumer: string) =>
  connection.execute(`SELECT pg_advisory_unlock(${lockKey}) AS unlocked`, [consumer], undefined).pipe(
    Effect.catchIf(isSessionEnded, (error) =>
      // A session-level lock ends with its session: nothing is wrong (e.g. the embedded server stopped first
      // on Ctrl-C, which signals it too).
      Effect.logInfo(`consumer ${consumer}: its lock ended with its session (${error.cause})`),
    ),
    Effect.catchAllCause((cause) => Effect.logWarning(`consumer ${consumer}: unlocking failed`, cause)),
  )

/**
 * Takes the consumer's session-level advisory lock on a connection reserved from the pool for as long as
 * the scope lives, trying again every `retryInterval` while another instance (in any process) holds it; the
 * lock frees when its holder's scope closes or its connection dies, and then a waiting instance takes over.
 * Returns the connection: the caller probes it (see probeLock) to learn that the lock was lost.
 */
export const holdConsumerLock = (consumer: string, retryInterval: Duration.DurationInput) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const connection = yield* sql.reserve
    const refusals = consumerMetric.lockRefusals(consumer)
    // Uninterruptible from the query to the finalizer: a lock taken by a query whose fiber was interrupted
    // would otherwise stay on a connection that goes back to the pool, and the consumer would never run again.
    const attempt = Effect.uninterruptible(
      Effect.tap(tryLock(connection, consumer), (locked) =>
        locked ? Effect.addFinalizer(() => unlock(connection, consumer)) : Metric.increment(refusals),
      ),
    )
    yield* attempt.pipe(
      Effect.repeat({ until: (locked) => locked, schedule: Schedule.spaced(retryInterval) }),
    )
    return connection
  })

/** Checks that the connection holding a consumer's lock is alive: if it is, its session still holds the lock. */
export const probeLock = (connection: SqlConnection.Connection, consumer: string) =>
  connection.execute("SELECT 1", [], undefined).pipe(
    Effect.asVoid,
    Effect.mapError((cause) => new ConsumerLockLost({ consumer, cause })),
  )

import { SqlError } from "@effect/sql"
import { Duration, Effect, Redacted } from "effect"
import pg from "pg"

/**
 * The most statement texts given a name: every statement of the code is a fixed text (batches go through
 * unnest arrays, not a varying number of parameters), so this only bounds a mistake; past it, statements run
 * unnamed as before.
 */
export const MAX_NAMED_STATEMENTS = 2_000

const names = new Map<string, string>()

/** The name of a statement text, the same in every connection of the process (undefined past the limit). */
const nameOf = (text: string) => {
  let name = names.get(text)
  if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
    name = `points_${names.size}`
    names.set(text, name)
  }
  return name
}

/**
 * A pg client that prepares each statement with parameters once per connection (a named statement) and then
 * only binds and executes it: PostgreSQL no longer parses and plans it on every call (its CPU per write in
 * bench:http went from 3.8 to 2.1 ms). Statements without parameters (DDL, BEGIN, LISTEN) run as given.
 * Needs a session, not a transaction-pooling proxy, between the API and PostgreSQL.
 */
class PreparingClient extends pg.Client {}

type LooseQuery = (this: pg.Client, ...args: Array<unknown>) => unknown
const plainQuery = pg.Client.prototype.query as LooseQuery

// Set on the prototype rather than declared: pg's typings overload `query` too many ways to override.
Object.defineProperty(PreparingClient.prototype, "query", {
  value: function (this: pg.Client, config: unknown, ...rest: Array<unknown>) {
    const [values, callback] = rest
    if (typeof config === "string" && Array.isArray(values) && values.length > 0) {
      const name = nameOf(config)
      if (name !== undefined) return plainQuery.call(this, { name, text: config, values }, callback)
    }
    return plainQuery.call(this, config, ...rest)
  },
})

/** How long a pooled connection may sit idle inside a transaction before PostgreSQL ends its session. */
export const IDLE_IN_TRANSACTION_MILLIS = 60_000

/** How often PostgreSQL checks, while a statement runs, that the connection's client is still there. */
export const CLIENT_CHECK_MILLIS = 1_000

/** What the pool connects to and how. */
export interface StatementPoolOptions {
  readonly url: Redacted.Redacted
  readonly maxConnections: number
  readonly applicationName: string
  readonly connectTimeout: Duration.DurationInput
  /** How long a connection may sit idle inside a transaction (default IDLE_IN_TRANSACTION_MILLIS). */
  readonly idleInTransaction?: Duration.DurationInput
}

/**
 * A pg pool of PreparingClients, checked with a first query and ended with its scope: what
 * PgClient.layerFromPool takes (@effect/sql-pg's own pool cannot be given a client class).
 */
export const statementPool = (options: StatementPoolOptions) => {
  const timeout = Duration.decode(options.connectTimeout)
  return Effect.acquireRelease(
    Effect.suspend(() => {
      const pool = new pg.Pool({
        connectionString: Redacted.value(options.url),
        max: options.maxConnections,
        application_name: options.applicationName,
        connectionTimeoutMillis: Duration.toMillis(timeout),
        // A transaction left open by a process that hangs (stopped, deadlocked) would hold its locks for ever
        // and, waited on, drain every other process's pool: PostgreSQL ends it after this long idle. None of
        // ours idles that long (a webhook send, the longest wait inside one, gives up after 10 s); a claim's
        // transaction sets its own (IDEMPOTENCY_LEASE_SECONDS).
        idle_in_transaction_session_timeout: Duration.toMillis(
          options.idleInTransaction ?? IDLE_IN_TRANSACTION_MILLIS,
        ),
        // A session whose process died while its statement waits (on a row lock, say) goes on waiting, and
        // holding what it took (a claimed key), until the lock frees: PostgreSQL reads the socket only
        // between statements. It checks every second that its client is still there (PostgreSQL 14+).
        options: `-c client_connection_check_interval=${CLIENT_CHECK_MILLIS}`,
        Client: PreparingClient,
      })
      // A connection lost while idle is replaced at the next checkout; the pool must not crash the process.
      pool.on("error", () => undefined)
      return Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError.SqlError({ cause, message: "PgClient: Failed to connect" }),
      }).pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new SqlError.SqlError({
              cause: new Error("Connection timed out"),
              message: "PgClient: Connection timed out",
            }),
        }),
        Effect.tapError(() => Effect.promise(() => pool.end())),
        Effect.as(pool),
      )
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000)),
  )
}

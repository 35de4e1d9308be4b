import { Config, ConfigError, Either, Option, Redacted } from "effect"

/** Where the system of record lives: a server given by `DATABASE_URL`, or an embedded one under `DATA_DIR`. */
export interface DatabaseConfig {
  /** The server to use; none means an embedded PostgreSQL with its data under `dataDir`. */
  readonly url: Option.Option<Redacted.Redacted>
  /** The embedded server's data directory, kept across restarts. */
  readonly dataDir: string
  /** Connections in the pool. */
  readonly poolSize: number
}

// postgres://user:password@host:port/database, or a socket directory as `?host=/var/run/postgresql`.
const isPostgresUrl = (url: Redacted.Redacted) => {
  const text = Redacted.value(url)
  if (!URL.canParse(text)) return false
  const parsed = new URL(text)
  return (
    (parsed.protocol === "postgres:" || parsed.protocol === "postgresql:") &&
    (parsed.hostname !== "" || parsed.searchParams.has("host"))
  )
}

/** Reads the database settings from the environment: DATABASE_URL, DATA_DIR (.data), DATABASE_POOL_SIZE (10). */
export const databaseConfig: Config.Config<DatabaseConfig> = Config.all({
  url: Config.option(Config.redacted("DATABASE_URL")).pipe(
    Config.mapOrFail((url) =>
      Option.match(url, { onNone: () => true, onSome: isPostgresUrl })
        ? Either.right(url)
        : // Not the value: it may hold a password.
          Either.left(
            ConfigError.InvalidData(
              ["DATABASE_URL"],
              "must be a postgres:// or postgresql:// URL naming a host (or a host= socket directory)",
            ),
          ),
    ),
  ),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault(".data")),
  poolSize: Config.integer("DATABASE_POOL_SIZE").pipe(
    Config.validate({ message: "must be an integer from 1 to 500", validation: (n) => n >= 1 && n <= 500 }),
    Config.withDefault(10),
  ),
})

import { Reactivity } from "@effect/experimental"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { type Migrator, SqlClient, type SqlError } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { type ConfigError, Context, Deferred, Effect, Layer, Option, type Redacted, Schedule } from "effect"
import { migrations } from "../migrations/index.js"
import { ServiceFault, ServiceFaults } from "../runtime/service-fault.js"
import type { StartFailure } from "../runtime/start-failure.js"
import { type DatabaseConfig, databaseConfig } from "./database-config.js"
import { type EmbeddedServerError, startEmbeddedServer } from "./embedded-server.js"
import { DatabasePool, poolUsageOf } from "./pool-usage.js"
import { statementPool } from "./statement-pool.js"

const EMBEDDED_DATABASE = "points"

/** Creates the database on the server unless it exists (CREATE DATABASE cannot run in a transaction). */
export const ensureDatabase = (adminUrl: Redacted.Redacted, name: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const admin = yield* PgClient.make({ url: adminUrl, maxConnections: 1 })
      const found = yield* admin`SELECT 1 FROM pg_database WHERE datname = ${name}`
      if (found.length === 0) {
        yield* admin.unsafe(`CREATE DATABASE "${name.replaceAll('"', '""')}"`).pipe(
          // Another process may have created it between the check and here.
          Effect.catchAll((error) =>
            Effect.flatMap(admin`SELECT 1 FROM pg_database WHERE datname = ${name}`, (rows) =>
              rows.length > 0 ? Effect.void : Effect.fail(error),
            ),
          ),
        )
      }
    }),
  )

/** The URL to connect to: DATABASE_URL, or an embedded server started for this scope. */
const serverUrl = (config: DatabaseConfig) =>
  Option.match(config.url, {
    onSome: (url) => Effect.succeed(url),
    onNone: () =>
      Effect.gen(function* () {
        const server = yield* startEmbeddedServer(config.dataDir)
        // A server that ends under a running service (killed, crashed) is not started again here: the
        // service ends, so that its supervisor restarts it on the data (every request would be a 503 meanwhile).
        const faults = yield* Effect.serviceOption(ServiceFaults)
        if (Option.isSome(faults)) {
          yield* Effect.forkScoped(
            Effect.flatMap(server.ended, (how) =>
              Deferred.fail(
                faults.value,
                new ServiceFault({
                  message: `the embedded PostgreSQL on DATA_DIR (${config.dataDir}) ended (${how}); restart the process`,
                }),
              ),
            ),
          )
        }
        yield* ensureDatabase(server.adminUrl, EMBEDDED_DATABASE)
        return server.urlOf(EMBEDDED_DATABASE)
      }),
  })

/**
 * A pooled client of the database at `url`, with every migration applied, and a read-only view of its pool
 * (DatabasePool).
 */
export const databaseAt = (url: Redacted.Redacted, options: { readonly poolSize: number }) => {
  // PgClient.layerFromPool, with the pool kept for its view: the client does not expose it. Released in
  // reverse: the client first, then the pool ends.
  const client = Layer.scopedContext(
    Effect.gen(function* () {
      const pool = yield* statementPool({
        url,
        maxConnections: options.poolSize,
        applicationName: "points-platform",
        connectTimeout: "10 seconds",
      })
      const sql = yield* PgClient.fromPool({
        acquire: Effect.succeed(pool),
        applicationName: "points-platform",
      })
      return Context.make(PgClient.PgClient, sql).pipe(
        Context.add(SqlClient.SqlClient, sql),
        Context.add(DatabasePool, poolUsageOf(pool, options.poolSize)),
      )
    }),
  ).pipe(Layer.provide(Reactivity.layer))
  // Two processes starting at once may both try to create the migrations table; the loser retries and then
  // finds every migration applied under the migrator's table lock.
  const migrated = PgMigrator.layer({ loader: migrations }).pipe(
    Layer.retry(Schedule.recurs(3)),
    Layer.provide(NodeContext.layer),
  )
  return Layer.provideMerge(migrated, client)
}

/**
 * The system of record: with DATABASE_URL set, that server; unset, an embedded PostgreSQL whose data stays
 * under DATA_DIR (default `.data/`) across restarts. Migrations run before the layer is ready.
 */
export const DatabaseLive: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient | DatabasePool,
  SqlError.SqlError | ConfigError.ConfigError | EmbeddedServerError | StartFailure | Migrator.MigrationError
> = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* databaseConfig
    const url = yield* serverUrl(config)
    return databaseAt(url, { poolSize: config.poolSize })
  }),
).pipe(Layer.provide(Reactivity.layer))

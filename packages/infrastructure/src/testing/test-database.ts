import { Reactivity } from "@effect/experimental"
import type { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { databaseAt, ensureDatabase } from "../database/database.js"

/** The environment variable through which a test run's global setup hands the server to test files. */
export const TEST_SERVER_URL_VARIABLE = "POINTS_TEST_SERVER_URL"

const serverUrl = () => {
  const url = process.env[TEST_SERVER_URL_VARIABLE]
  if (url === undefined) {
    throw new Error(
      `${TEST_SERVER_URL_VARIABLE} is unset: add @points/infrastructure/testing/global-setup to vitest`,
    )
  }
  return new URL(url)
}

/** The URL of another database on the same server as `url`. */
const withDatabase = (url: URL, database: string) => {
  const copy = new URL(url.href)
  copy.pathname = `/${database}`
  return Redacted.make(copy.href)
}

/**
 * A fresh, migrated database for one test file on the run's server (embedded, or DATABASE_URL's), dropped
 * when the layer is released. Test files never see each other's data.
 */
export const testDatabase = (options: { readonly poolSize?: number } = {}) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const server = serverUrl()
      const admin = withDatabase(server, "postgres")
      const name = `test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
      yield* ensureDatabase(admin, name)
      yield* Effect.addFinalizer(() =>
        Effect.scoped(
          Effect.flatMap(PgClient.make({ url: admin, maxConnections: 1 }), (sql) =>
            sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
          ),
        ).pipe(Effect.provide(Reactivity.layer), Effect.ignore),
      )
      return databaseAt(withDatabase(server, name), { poolSize: options.poolSize ?? 10 })
    }).pipe(Effect.provide(Reactivity.layer)),
  ) satisfies Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, unknown>

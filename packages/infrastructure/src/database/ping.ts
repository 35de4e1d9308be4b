import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** One trivial statement: succeeds when the database answers (the readiness probe). */
export const pingDatabase: Effect.Effect<void, unknown, SqlClient.SqlClient> = Effect.asVoid(
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`),
)

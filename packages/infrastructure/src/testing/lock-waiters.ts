import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * How many statements of the current database wait on a lock right now (pg_stat_activity): for tests that
 * hold a lock and must know that what they started has reached it (with `eventually`), never a sleep.
 */
export const lockWaiters = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ readonly waiting: number }>`
      SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    (rows) => rows[0]?.waiting ?? 0,
  ),
)

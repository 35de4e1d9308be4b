import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Drops `append_to_streams` (migration 0012). Handing every append of a statement to it as one JSON array
 * saved the API a little CPU on large write batches (within the noise of bench:http), but parsing the JSON
 * and looping in PL/pgSQL made each single append dearer for PostgreSQL: bench:store's ratio fell from
 * 0.76-0.79 to 0.66-0.68. Appends are again direct calls of `append_to_stream`, one per stream in a
 * statement. (0012 stays: a landed migration is never edited or removed.)
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP FUNCTION append_to_streams(jsonb, timestamptz)`
})

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Request rate limits shared by every API process: one row per key (a partner, or a client of the token
 * endpoints) holding its GCRA state, the theoretical arrival time `tat` of the next request. A key without a
 * row, or whose `tat` has passed, has its whole burst available. `last_allowed` is the decision of the latest
 * request: RETURNING only sees the row as written, so the one statement that decides leaves it there.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE rate_limits (
      key           text PRIMARY KEY,
      tat           timestamptz NOT NULL,
      last_allowed  boolean NOT NULL
    )`
})

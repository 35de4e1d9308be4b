import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A key's rate-limit clock never runs backwards: `decided_at` is the database time its latest request was
 * decided at. A statement reads the clock before it queues on the key's row, so a request that queued behind
 * a later-started one decided on an earlier time than it: its `RateLimit` remaining came out one short, and it
 * could be refused a moment early. Each decision now takes the later of the two.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE rate_limits ADD COLUMN decided_at timestamptz`
})

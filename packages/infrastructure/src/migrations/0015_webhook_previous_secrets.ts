import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An endpoint keeps every secret replaced by a rotation signing until its own grace period ends, not only the
 * last one: a second rotation within a day no longer ends the first one's grace. The replaced secrets, newest
 * first, are one JSON array of `{id, valid_until}` references into `webhook_signing_secrets`.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_endpoints ADD COLUMN previous_secrets jsonb NOT NULL DEFAULT '[]'`
  yield* sql`
    UPDATE webhook_endpoints
    SET previous_secrets = jsonb_build_array(
      jsonb_build_object('id', previous_secret_id, 'valid_until', previous_secret_valid_until))
    WHERE previous_secret_id IS NOT NULL`
  yield* sql`
    ALTER TABLE webhook_endpoints
      DROP COLUMN previous_secret_id,
      DROP COLUMN previous_secret_valid_until,
      ADD CHECK (jsonb_typeof(previous_secrets) = 'array')`
})

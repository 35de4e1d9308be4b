import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A rotation now ends the grace of every secret replaced before the one it replaces (each signing secret is one
 * more signature in every delivery's header, and 330 rotations in a day made one receivers refuse): an
 * endpoint keeps at most the secret its last rotation replaced, the first of its list (newest first), as the
 * log replayed under that rule gives it. The CHECK holds the read model to it.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    UPDATE webhook_endpoints SET previous_secrets = jsonb_build_array(previous_secrets -> 0)
    WHERE jsonb_array_length(previous_secrets) > 1`
  yield* sql`
    ALTER TABLE webhook_endpoints
      ADD CONSTRAINT webhook_endpoints_one_previous_secret CHECK (jsonb_array_length(previous_secrets) <= 1)`
})

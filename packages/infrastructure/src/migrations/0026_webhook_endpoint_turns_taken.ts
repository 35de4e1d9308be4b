import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `webhook_endpoint_turns`: when each endpoint last had an attempt claimed. Within a partner, endpoints at the
 * same turn go in the order they were last served (never first), so endpoints take turns over time too: when
 * one slot frees at a time, the endpoint whose attempt just ended does not take it again ahead of one that
 * has waited (a failing endpoint's probe behind a healthy backlog, or the other way round). Dispatch state,
 * like the deliveries: no read model.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_endpoint_turns (
      endpoint_id      uuid PRIMARY KEY,
      last_claimed_at  timestamptz NOT NULL
    )`
})

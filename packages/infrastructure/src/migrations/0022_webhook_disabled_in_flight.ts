import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `disabled_during_lease`: the claim (its `leased_by` token) during which the attempt's endpoint was disabled.
 * A disable ends the pending attempts no dispatcher holds and marks those being made with the token of their
 * claim; recording one that failed then schedules no retry and starts no failing streak, even when the endpoint
 * was enabled again in between. A later claim of the same row carries another token, so the mark is of one
 * claim only. Operational state of the dispatcher, like the rest of the table: no read model, no rebuild.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_deliveries ADD COLUMN disabled_during_lease text`
})

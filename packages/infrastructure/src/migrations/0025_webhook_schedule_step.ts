import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `schedule_step`: the entry of the retry schedule an attempt stands at, which an attempt cut off (its
 * dispatcher stopped, or its lease ran out unrecorded) passes on to the next one unchanged: a cut-off is not
 * the receiver's failure, so it spends none of the receiver's retries. Null on older rows: their attempt
 * number, as before. `claimed_at`: when the attempt was claimed, the time a cut-off one is recorded at.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE webhook_deliveries
      ADD COLUMN schedule_step integer CHECK (schedule_step >= 1),
      ADD COLUMN claimed_at timestamptz`
})

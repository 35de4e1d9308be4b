import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Where each asynchronous consumer of the global log stands: the (transaction id, position) of the last
 * event it handled, in commit order (see readAllAfter). The row is locked by the batch that moves it, and it
 * moves in the transaction that holds the handler's writes, so both commit together or not at all.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE consumer_checkpoints (
      consumer         text PRIMARY KEY,
      transaction_id   xid8 NOT NULL,
      global_position  bigint NOT NULL CHECK (global_position >= 0),
      updated_at       timestamptz NOT NULL DEFAULT now()
    )`
})

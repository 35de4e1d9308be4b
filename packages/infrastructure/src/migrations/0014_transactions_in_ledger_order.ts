import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Transactions are listed in ledger order, by the global position of the event that recorded each one (an
 * account's events take their positions in the order its balance moved), no longer by id: ids are made when
 * a request arrives, and concurrent requests on one account are decided in another order, so a list by id
 * broke the `balance_after` chain. The id indexes the list used give way to position indexes.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX points_transactions_by_partner`
  yield* sql`DROP INDEX points_transactions_by_user`
  yield* sql`CREATE INDEX points_transactions_by_partner ON points_transactions (partner_id, global_position)`
  yield* sql`
    CREATE INDEX points_transactions_by_user ON points_transactions (partner_id, user_id, global_position)`
})

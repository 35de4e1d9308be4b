import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `GET /api/points/transactions` never skips a transaction that commits late, as `/api/events` (migration
 * 0018): each row records the database transaction that wrote it. Rows there before have none: they
 * committed long before any cursor that could miss them. A rebuild writes every row again in one
 * transaction: a cursor read before it then gives the rebuilt rows again (never fewer).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE points_transactions ADD COLUMN transaction_id xid8`
  yield* sql`ALTER TABLE points_transactions ALTER COLUMN transaction_id SET DEFAULT pg_current_xact_id()`
  yield* sql`
    CREATE INDEX points_transactions_by_partner_transaction ON points_transactions (partner_id, transaction_id)`
})

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `GET /api/orders` and `GET /api/users` never skip a row that commits late either (as migrations 0018 and
 * 0019 for events and transactions): each row records the database transaction that inserted it (a later
 * update keeps it: what a list may skip is a row becoming visible, not a row changing).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const table of ["orders", "users"]) {
    yield* sql.unsafe(`ALTER TABLE ${table} ADD COLUMN transaction_id xid8`)
    yield* sql.unsafe(`ALTER TABLE ${table} ALTER COLUMN transaction_id SET DEFAULT pg_current_xact_id()`)
    yield* sql.unsafe(`CREATE INDEX ${table}_by_partner_transaction ON ${table} (partner_id, transaction_id)`)
  }
})

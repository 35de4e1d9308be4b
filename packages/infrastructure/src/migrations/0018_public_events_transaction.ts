import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `/api/events` never skips an event that commits late (see selectPageOfCommits): each public event records
 * the transaction that wrote it, and a page's cursor the snapshot its read saw, so the next page can give
 * the events of transactions that read could not see. Rows written before this have no transaction id: they
 * committed long before any cursor that could miss them.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Added without a value for the rows there (no table rewrite), then defaulted for every new row.
  yield* sql`ALTER TABLE public_events ADD COLUMN transaction_id xid8`
  yield* sql`ALTER TABLE public_events ALTER COLUMN transaction_id SET DEFAULT pg_current_xact_id()`
  yield* sql`CREATE INDEX public_events_by_partner_transaction ON public_events (partner_id, transaction_id)`
})

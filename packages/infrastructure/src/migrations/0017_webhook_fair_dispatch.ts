import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Webhook dispatch shared fairly between partners: a claim takes each partner's due attempts in turn (every
 * partner's first before anyone's second) and never more than a partner's share in flight at once.
 *
 * `webhook_deliveries_due_by_partner` finds the partners with pending attempts (a skip scan, one descent per
 * partner) and each partner's due attempts in order; `webhook_deliveries_leased` counts a partner's attempts
 * in flight (pending and leased: a handful of rows, whatever the backlog).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE INDEX webhook_deliveries_due_by_partner ON webhook_deliveries (partner_id, next_attempt_at, id)
    WHERE status = 'pending'`
  yield* sql`
    CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (partner_id, lease_until)
    WHERE status = 'pending' AND lease_until IS NOT NULL`
})

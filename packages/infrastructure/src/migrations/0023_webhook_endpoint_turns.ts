import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Webhook dispatch takes turns between a partner's endpoints too: a claim walks the endpoints with pending
 * attempts (a skip scan, one descent per endpoint, which also gives each its earliest attempt) and takes each
 * one's due attempts in order, so one endpoint's backlog never hides another's due attempt. The partner-wide
 * index it replaces served the walk over partners alone.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE INDEX webhook_deliveries_due_by_endpoint
    ON webhook_deliveries (partner_id, endpoint_id, next_attempt_at, id)
    WHERE status = 'pending'`
  yield* sql`DROP INDEX webhook_deliveries_due_by_partner`
})

import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { type FulfilmentJobRow, jobOf } from "./fulfilment-job.js"

/**
 * The unfinished job due first that no other worker holds, locked until the transaction ends (FOR UPDATE
 * SKIP LOCKED: any number of workers, in any number of processes, each take a different job and never
 * wait for one another), with whether it is due on the database's clock. None when every unfinished job
 * is held or there is none.
 */
export const lockNextJob = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<FulfilmentJobRow>`
    SELECT order_id, partner_id, user_id, stage, request_id, correlation_id, causation_id, attempts,
           due_at <= now() AS due,
           GREATEST(0, EXTRACT(EPOCH FROM (due_at - now())) * 1000)::float8 AS due_in_millis
    FROM fulfilment_jobs
    WHERE stage <> 'done'
    ORDER BY due_at
    LIMIT 1
    FOR UPDATE SKIP LOCKED`
  return Option.map(Option.fromNullable(rows[0]), jobOf)
})

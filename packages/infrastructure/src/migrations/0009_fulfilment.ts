import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Sandbox order fulfilment: one job per order, recorded by the order-fulfilment consumer in the transaction
 * that moves its checkpoint past the OrderPlaced event (the primary key makes a redelivered event add
 * nothing). Workers claim due jobs with FOR UPDATE SKIP LOCKED and advance a job in the transaction that
 * appends the order's events, so a job's stage and its order's stream never disagree. The job keeps what
 * the events it causes record: their partner, the placing request's id, the correlation id, and the event
 * that caused the next step. Finished jobs stay (stage 'done' with the order's final status) as an audit.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE fulfilment_jobs (
      order_id        uuid PRIMARY KEY,
      partner_id      uuid NOT NULL,
      user_id         uuid NOT NULL,
      stage           text NOT NULL CHECK (stage IN ('pending', 'processing', 'done')),
      outcome         text CHECK (outcome IN ('completed', 'failed', 'cancelled')),
      due_at          timestamptz NOT NULL,
      request_id      text,
      correlation_id  text NOT NULL,
      causation_id    text NOT NULL,
      attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      last_error      text,
      created_at      timestamptz NOT NULL DEFAULT now(),
      updated_at      timestamptz NOT NULL DEFAULT now(),
      CHECK ((stage = 'done') = (outcome IS NOT NULL))
    )`
  // Workers look for the earliest job still to do; finished jobs are left out of the index.
  yield* sql`CREATE INDEX fulfilment_jobs_due ON fulfilment_jobs (due_at) WHERE stage <> 'done'`
})

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What webhooks are built from.
 *
 * `public_events`: the public event objects (`{id, type, timestamp, data}`) partners read at `/api/events` and
 * receive by webhook. Written inline, in the unit of work that appends the domain event they describe, with
 * `data` rendered from the read model exactly as its GET returns it at that moment; `id` is the domain
 * event's id, so a public event is traceable to the log and a replay keeps it. Append-only: a record of what
 * was announced, never rebuilt (deliveries and receivers refer to these ids).
 *
 * `webhook_signing_secrets`: the `whsec_` secrets. HMAC signing needs the secret itself, so it cannot be a
 * hash like client secrets; it lives only here (never in events, logs or read models), referenced by id from
 * the endpoint's stream. The endpoint read model carries the ids of the current and the previous secret.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE public_events (
      id               uuid PRIMARY KEY,
      partner_id       uuid NOT NULL,
      type             text NOT NULL,
      occurred_at      timestamptz NOT NULL,
      data             jsonb NOT NULL CHECK (jsonb_typeof(data) = 'object'),
      global_position  bigint NOT NULL
    )`
  yield* sql`CREATE INDEX public_events_by_partner ON public_events (partner_id, id)`
  yield* sql`CREATE INDEX public_events_by_partner_time ON public_events (partner_id, occurred_at, id)`
  yield* sql`CREATE INDEX public_events_by_partner_type ON public_events (partner_id, type, id)`
  yield* sql`
    CREATE TRIGGER public_events_append_only BEFORE UPDATE OR DELETE ON public_events
    FOR EACH ROW EXECUTE FUNCTION events_are_immutable()`
  yield* sql`
    CREATE TABLE webhook_signing_secrets (
      id           uuid PRIMARY KEY,
      partner_id   uuid NOT NULL,
      endpoint_id  uuid NOT NULL,
      secret       text NOT NULL CHECK (secret LIKE 'whsec\\_%'),
      created_at   timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX webhook_signing_secrets_by_endpoint ON webhook_signing_secrets (endpoint_id)`
  // The table is empty before this migration (no endpoint API existed), so NOT NULL needs no backfill.
  yield* sql`
    ALTER TABLE webhook_endpoints
      ADD COLUMN secret_id uuid NOT NULL,
      ADD COLUMN previous_secret_id uuid,
      ADD COLUMN previous_secret_valid_until timestamptz,
      ADD CHECK ((previous_secret_id IS NULL) = (previous_secret_valid_until IS NULL))`
})

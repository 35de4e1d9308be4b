import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The event store. `streams` holds each stream's version (the row optimistic concurrency updates);
 * `events` is the append-only log. `transaction_id` (xid8) lets consumers read in commit order without
 * skipping a transaction that committed after a later-numbered one (see readAllAfter).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE streams (
      stream_id   text PRIMARY KEY,
      category    text NOT NULL,
      partner_id  uuid NOT NULL,
      version     bigint NOT NULL CHECK (version > 0)
    )`
  yield* sql`
    CREATE TABLE events (
      global_position  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      transaction_id   xid8 NOT NULL DEFAULT pg_current_xact_id(),
      stream_id        text NOT NULL REFERENCES streams (stream_id),
      stream_version   bigint NOT NULL CHECK (stream_version > 0),
      event_id         uuid NOT NULL UNIQUE,
      event_type       text NOT NULL,
      schema_version   integer NOT NULL,
      data             jsonb NOT NULL,
      partner_id       uuid NOT NULL,
      request_id       text,
      idempotency_key  text,
      causation_id     text,
      correlation_id   text,
      occurred_at      timestamptz NOT NULL,
      UNIQUE (stream_id, stream_version)
    )`
  yield* sql`CREATE INDEX events_commit_order ON events (transaction_id, global_position)`
  yield* sql`CREATE INDEX events_partner_type ON events (partner_id, event_type, global_position)`
  // Everything the store refuses to change once written: an audit log that can be edited explains nothing.
  yield* sql`
    CREATE FUNCTION events_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'events are append-only';
    END $$`
  yield* sql`
    CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_are_immutable()`
})

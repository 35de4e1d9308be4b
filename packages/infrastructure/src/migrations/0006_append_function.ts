import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The append as a PL/pgSQL function. The statements inside a function are planned once per connection and
 * their plans cached, where the same work sent as one CTE was planned on every call: planning was most of an
 * append's cost (bench:store). The version bump and the insert still run in the caller's statement, so an
 * append stays atomic without a transaction of its own. No rows returned means a version conflict.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION append_to_stream(
      p_stream_id text, p_category text, p_partner_id uuid, p_expectation text, p_expected_version bigint,
      p_event_ids uuid[], p_types text[], p_schema_versions int[], p_data jsonb[],
      p_request_id text, p_idempotency_key text, p_causation_id text, p_correlation_id text,
      p_occurred_at timestamptz)
    RETURNS TABLE (appended_position bigint, appended_transaction text, appended_version bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      appended_count int := cardinality(p_event_ids);
      last_version bigint;
    BEGIN
      IF p_expectation = 'no_stream' THEN
        INSERT INTO streams (stream_id, category, partner_id, version)
        VALUES (p_stream_id, p_category, p_partner_id, appended_count)
        ON CONFLICT (stream_id) DO NOTHING
        RETURNING streams.version INTO last_version;
      ELSIF p_expectation = 'exact' THEN
        UPDATE streams SET version = streams.version + appended_count
        WHERE streams.stream_id = p_stream_id AND streams.category = p_category
          AND streams.partner_id = p_partner_id AND streams.version = p_expected_version
        RETURNING streams.version INTO last_version;
      ELSIF p_expectation = 'any' THEN
        INSERT INTO streams (stream_id, category, partner_id, version)
        VALUES (p_stream_id, p_category, p_partner_id, appended_count)
        ON CONFLICT (stream_id) DO UPDATE SET version = streams.version + appended_count
        WHERE streams.partner_id = p_partner_id
        RETURNING streams.version INTO last_version;
      ELSE
        RAISE EXCEPTION 'unknown expectation %', p_expectation;
      END IF;
      IF last_version IS NULL THEN
        RETURN;
      END IF;
      IF appended_count = 1 THEN
        RETURN QUERY
        INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, partner_id,
                            request_id, idempotency_key, causation_id, correlation_id, occurred_at)
        VALUES (p_stream_id, last_version, p_event_ids[1], p_types[1], p_schema_versions[1], p_data[1],
                p_partner_id, p_request_id, p_idempotency_key, p_causation_id, p_correlation_id, p_occurred_at)
        RETURNING events.global_position, events.transaction_id::text, events.stream_version;
      ELSE
        RETURN QUERY
        INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, partner_id,
                            request_id, idempotency_key, causation_id, correlation_id, occurred_at)
        SELECT p_stream_id, last_version - appended_count + e.n, e.event_id, e.event_type, e.schema_version,
               e.data, p_partner_id, p_request_id, p_idempotency_key, p_causation_id, p_correlation_id,
               p_occurred_at
        FROM unnest(p_event_ids, p_types, p_schema_versions, p_data) WITH ORDINALITY
          AS e(event_id, event_type, schema_version, data, n)
        ORDER BY e.n
        RETURNING events.global_position, events.transaction_id::text, events.stream_version;
      END IF;
    END $$`
})

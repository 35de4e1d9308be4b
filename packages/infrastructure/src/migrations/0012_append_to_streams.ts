import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Appends to many streams in one call: `append_to_streams(calls, occurred_at)` takes every stream's append
 * as one JSON array (stream, expectation, event ids, types, versions, payloads, metadata, snapshot) and runs
 * the 15-argument `append_to_stream` for each in order, returning its rows tagged with the call's index. One
 * statement text and two parameters, where a `UNION ALL` of calls sent ~14 parameters per stream, each
 * payload a JSON string escaped into an array literal by the driver: that encoding was a quarter of a write
 * batch's CPU in the API (bench:http). The semantics are the function's own: each call appends at its
 * expected version or returns no rows (a conflict), and nothing else changes.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION append_to_streams(p_calls jsonb, p_occurred_at timestamptz)
    RETURNS TABLE (call int, appended_position bigint, appended_transaction text, appended_version bigint)
    LANGUAGE plpgsql AS $$
    #variable_conflict use_column
    DECLARE
      c jsonb;
      n bigint;
    BEGIN
      FOR c, n IN SELECT e.value, e.ordinality FROM jsonb_array_elements(p_calls) WITH ORDINALITY AS e
                  ORDER BY e.ordinality LOOP
        RETURN QUERY
        SELECT (n - 1)::int, a.appended_position, a.appended_transaction, a.appended_version
        FROM append_to_stream(
          c->>'stream_id', c->>'category', (c->>'partner_id')::uuid, c->>'expectation',
          (c->>'expected_version')::bigint,
          ARRAY(SELECT x.value::uuid FROM jsonb_array_elements_text(c->'event_ids') WITH ORDINALITY AS x
                ORDER BY x.ordinality),
          ARRAY(SELECT x.value FROM jsonb_array_elements_text(c->'types') WITH ORDINALITY AS x
                ORDER BY x.ordinality),
          ARRAY(SELECT x.value::int FROM jsonb_array_elements_text(c->'schema_versions') WITH ORDINALITY AS x
                ORDER BY x.ordinality),
          ARRAY(SELECT x.value FROM jsonb_array_elements(c->'data') WITH ORDINALITY AS x
                ORDER BY x.ordinality),
          c->>'request_id', c->>'idempotency_key', c->>'causation_id', c->>'correlation_id', p_occurred_at,
          c->'snapshot') AS a;
      END LOOP;
    END $$`
})

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The write path of a request, made cheaper (bench:http).
 *
 * Snapshots beside the stream: the state of an aggregate after its last append (encoded as JSON, tagged with
 * its format's name) and the version it is the state of. A unit of work reads it with the lock it takes on
 * the stream's row, in the same round trip, instead of folding the whole stream; events after
 * `snapshot_version` (appended without a snapshot) are folded on top, so a missing or stale snapshot only
 * costs time. The 15-argument `append_to_stream` appends as the 14-argument one does and stores the snapshot
 * in the same statement.
 *
 * `rate_limits` becomes UNLOGGED: a request's rate-limit update then writes no WAL, so its commit does not
 * wait for a disk flush (a request pays one durable commit, its business transaction's, not two). The price
 * is that a crash of the database server empties the table: every bucket starts full again, which a
 * throttle can afford; it is not replicated to standbys either, for the same reason.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE streams ADD COLUMN snapshot jsonb, ADD COLUMN snapshot_version bigint`
  yield* sql`
    CREATE FUNCTION append_to_stream(
      p_stream_id text, p_category text, p_partner_id uuid, p_expectation text, p_expected_version bigint,
      p_event_ids uuid[], p_types text[], p_schema_versions int[], p_data jsonb[],
      p_request_id text, p_idempotency_key text, p_causation_id text, p_correlation_id text,
      p_occurred_at timestamptz, p_snapshot jsonb)
    RETURNS TABLE (appended_position bigint, appended_transaction text, appended_version bigint)
    LANGUAGE plpgsql AS $$
    BEGIN
      RETURN QUERY SELECT * FROM append_to_stream(p_stream_id, p_category, p_partner_id, p_expectation,
        p_expected_version, p_event_ids, p_types, p_schema_versions, p_data, p_request_id, p_idempotency_key,
        p_causation_id, p_correlation_id, p_occurred_at);
      IF FOUND AND p_snapshot IS NOT NULL THEN
        UPDATE streams SET snapshot = p_snapshot, snapshot_version = streams.version
        WHERE streams.stream_id = p_stream_id;
      END IF;
    END $$`
  yield* sql`ALTER TABLE rate_limits SET UNLOGGED`
})

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The idempotency store. A key is not an event stream: its state (the domain's IdempotencyKey decider state)
 * is kept in one row per (partner, key) and overwritten as it moves, because nothing downstream consumes a
 * key's history and the global log should carry only business facts. Only live keys have a row (Claimed,
 * Completed, Released); an absent row is an unclaimed or reaped key. The checks make a row that no state
 * could produce impossible to write.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE idempotency_keys (
      partner_id         uuid NOT NULL,
      key                text NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
      state              text NOT NULL CHECK (state IN ('Claimed', 'Completed', 'Released')),
      method             text NOT NULL,
      path               text NOT NULL,
      body_sha256        text NOT NULL,
      first_received_at  timestamptz NOT NULL,
      expires_at         timestamptz NOT NULL,
      lease_expires_at   timestamptz,
      claim_token        uuid NOT NULL,
      response_status    integer,
      response_headers   jsonb,
      response_body      text,
      updated_at         timestamptz NOT NULL,
      PRIMARY KEY (partner_id, key),
      CHECK (expires_at > first_received_at),
      CHECK ((state = 'Claimed') = (lease_expires_at IS NOT NULL)),
      CHECK ((state = 'Completed') = (response_status IS NOT NULL)),
      CHECK ((response_status IS NULL) = (response_headers IS NULL)),
      CHECK ((response_status IS NULL) = (response_body IS NULL))
    )`
  // The reaper looks for keys whose lifetime ended.
  yield* sql`CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)`
})

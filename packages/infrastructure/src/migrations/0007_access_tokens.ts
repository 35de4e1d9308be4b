import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Access tokens: operational state, not events (a token is checked on every request and is worthless once
 * expired). Only the SHA-256 of a token is kept, so the table cannot be replayed as bearer tokens; a lookup
 * by that hash is the one indexed read `authenticateBearer` makes. Revoking a credential revokes its live
 * tokens by client (the partial index holds only tokens not yet revoked); the reaper deletes by expiry.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE access_tokens (
      token_hash  text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
      token_id    uuid NOT NULL UNIQUE,
      client_id   uuid NOT NULL,
      partner_id  uuid NOT NULL,
      created_at  timestamptz NOT NULL,
      expires_at  timestamptz NOT NULL,
      revoked_at  timestamptz,
      CHECK (expires_at > created_at)
    )`
  yield* sql`CREATE INDEX access_tokens_live_by_client ON access_tokens (client_id) WHERE revoked_at IS NULL`
  yield* sql`CREATE INDEX access_tokens_by_expiry ON access_tokens (expires_at)`
})

import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { newCursorSecret } from "../projections/cursor-seal.js"

/**
 * The key that seals what list cursors carry of their page's read (see cursor-seal.ts): one per database,
 * made here, so that every process of the platform opens every cursor.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE cursor_secrets (
      id      smallint PRIMARY KEY CHECK (id = 1),
      secret  bytea NOT NULL CHECK (length(secret) = 32)
    )`
  yield* sql`INSERT INTO cursor_secrets (id, secret) VALUES (1, ${newCursorSecret()})`
})

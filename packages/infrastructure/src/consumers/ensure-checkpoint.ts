import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Creates a consumer's checkpoint at the start of the log unless it has one: a restart keeps its place. */
export const ensureCheckpoint = (consumer: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO consumer_checkpoints (consumer, transaction_id, global_position)
      VALUES (${consumer}, '0'::xid8, 0)
      ON CONFLICT (consumer) DO NOTHING`
  })

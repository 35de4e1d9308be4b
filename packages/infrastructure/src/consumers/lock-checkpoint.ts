import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type CheckpointRow, checkpointOf } from "./checkpoint-row.js"

/**
 * Reads a consumer's checkpoint and locks it until the transaction ends, so a second instance that slipped
 * past the advisory lock (its holder's connection died mid-batch) waits here and then reads the moved
 * checkpoint: it never handles the same batch twice.
 */
export const lockCheckpoint = (consumer: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<CheckpointRow>`
      SELECT transaction_id::text AS transaction_id, global_position::text AS global_position
      FROM consumer_checkpoints WHERE consumer = ${consumer} FOR UPDATE`
    const row = rows[0]
    if (row === undefined) {
      return yield* Effect.dieMessage(`consumer ${consumer} has no checkpoint row (ensureCheckpoint first)`)
    }
    return checkpointOf(row)
  })

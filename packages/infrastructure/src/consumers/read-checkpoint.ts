import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { type CheckpointRow, checkpointOf } from "./checkpoint-row.js"

/** Where a consumer stands in the global log; none if it has never run. Takes no lock. */
export const readCheckpoint = (consumer: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<CheckpointRow>`
      SELECT transaction_id::text AS transaction_id, global_position::text AS global_position
      FROM consumer_checkpoints WHERE consumer = ${consumer}`
    return Option.map(Option.fromNullable(rows[0]), checkpointOf)
  })

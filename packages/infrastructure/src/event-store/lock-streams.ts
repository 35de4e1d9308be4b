import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { hasSqlState } from "../database/sql-state.js"
import type { StreamId } from "./stream-id.js"
import { StreamVersionConflict } from "./stream-version-conflict.js"

/** Which streams of a partner a unit of work locks at load: the ones it may write, and the ones it only reads. */
export interface StreamLocks {
  readonly partnerId: string
  readonly write: ReadonlyArray<StreamId>
  readonly read: ReadonlyArray<StreamId>
}

// Both sets in one round trip, each in stream id order. A writer of a hot stream then queues on its row
// instead of deciding on a state that is stale by the time it appends. Two units locking overlapping sets
// in different modes can still deadlock; PostgreSQL then aborts one, which is retried like a conflict.
const LOCK = `
  WITH written AS (
    SELECT stream_id, version, snapshot, snapshot_version FROM streams
    WHERE partner_id = $1 AND stream_id = ANY($2::text[]) ORDER BY stream_id FOR UPDATE
  ), read AS (
    SELECT stream_id, version, snapshot, snapshot_version FROM streams
    WHERE partner_id = $1 AND stream_id = ANY($3::text[]) ORDER BY stream_id FOR SHARE
  )
  SELECT stream_id, version::text AS version, snapshot, snapshot_version::text AS snapshot_version FROM written
  UNION ALL
  SELECT stream_id, version::text AS version, snapshot, snapshot_version::text AS snapshot_version FROM read`

/** A locked stream: its version, and the snapshot kept beside it (JSON as stored) with the version it is of. */
export interface LockedStream {
  readonly version: bigint
  readonly snapshot: unknown
  readonly snapshotVersion: bigint | null
}

/** PostgreSQL's SQLSTATE for a transaction aborted to break a deadlock. */
const DEADLOCK_DETECTED = "40P01"

/** True for a statement PostgreSQL aborted to break a deadlock: the unit of work may simply run again. */
export const isDeadlock = (error: unknown) => hasSqlState(error, DEADLOCK_DETECTED)

/**
 * Locks the existing streams of a unit of work until its transaction ends, FOR UPDATE those it may write and
 * FOR SHARE those it only reads, and returns their versions as of the lock (a stream absent for the partner
 * is left out: there is no row to lock yet, and its creation stays optimistic), with their snapshots: the
 * locking read returns the row as the last writer committed it. A deadlock fails as a
 * StreamVersionConflict, so the unit is retried.
 */
export const lockStreams = (locks: StreamLocks) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql
      .unsafe<{ stream_id: string; version: string; snapshot: unknown; snapshot_version: string | null }>(
        LOCK,
        [locks.partnerId, locks.write, locks.read],
      )
      .pipe(
        Effect.catchIf(isDeadlock, () =>
          Effect.fail(
            new StreamVersionConflict({
              streamId: [...locks.write, ...locks.read].join(","),
              expected: "lock",
            }),
          ),
        ),
      )
    return new Map(
      rows.map((row): [string, LockedStream] => [
        row.stream_id,
        {
          version: BigInt(row.version),
          snapshot: row.snapshot,
          snapshotVersion: row.snapshot_version === null ? null : BigInt(row.snapshot_version),
        },
      ]),
    )
  })

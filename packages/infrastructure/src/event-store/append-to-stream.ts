import { SqlClient } from "@effect/sql"
import type { EventCatalog } from "@points/domain"
import { DateTime, Effect } from "effect"
import { v7 as uuidV7 } from "uuid"
import { ExpectedVersion } from "./expected-version.js"
import type { AppendContext, RecordedEvent } from "./recorded-event.js"
import { categoryOf, type StreamId } from "./stream-id.js"
import { StreamVersionConflict } from "./stream-version-conflict.js"

/** What to append to one stream. */
export interface AppendRequest<Event> {
  readonly streamId: StreamId
  readonly expected: ExpectedVersion
  readonly events: ReadonlyArray<Event>
  readonly catalog: EventCatalog<Event>
  readonly context: AppendContext
}

/** Where the appended events landed. */
export interface AppendResult<Event> {
  /** The stream's version after the append: the version of its last event. */
  readonly nextVersion: bigint
  /** The events as the log now holds them. */
  readonly recorded: ReadonlyArray<RecordedEvent<Event>>
}

// The stream's version moves in the same statement that inserts its events: one round trip, atomic without a
// transaction of its own, and a concurrent writer at the same expected version finds the row changed (it waits
// on the row lock, re-checks the version, and bumps nothing), so exactly one of them inserts.
const bumpVersion = (expected: ExpectedVersion) =>
  ExpectedVersion.$match(expected, {
    // $5 (the expected version) is null for these two; it is still typed so every statement takes 14 params.
    NoStream: () => `INSERT INTO streams (stream_id, category, partner_id, version)
                     SELECT $1, $2, $3, $4 WHERE $5::bigint IS NULL
                     ON CONFLICT (stream_id) DO NOTHING RETURNING version`,
    Exact: () => `UPDATE streams SET version = version + $4
                  WHERE stream_id = $1 AND category = $2 AND partner_id = $3 AND version = $5::bigint
                  RETURNING version`,
    Any: () => `INSERT INTO streams (stream_id, category, partner_id, version)
                SELECT $1, $2, $3, $4 WHERE $5::bigint IS NULL
                ON CONFLICT (stream_id) DO UPDATE SET version = streams.version + $4
                WHERE streams.partner_id = $3 RETURNING version`,
  })

const statement = (expected: ExpectedVersion) => `
  WITH bumped AS (${bumpVersion(expected)}),
  new_events AS (
    SELECT * FROM unnest($6::uuid[], $7::text[], $8::int[], $9::jsonb[]) WITH ORDINALITY
      AS e(event_id, event_type, schema_version, data, n)
  )
  INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, partner_id,
                      request_id, idempotency_key, causation_id, correlation_id, occurred_at)
  SELECT $1, bumped.version - $4 + e.n, e.event_id, e.event_type, e.schema_version, e.data, $3,
         $10, $11, $12, $13, $14
  FROM bumped CROSS JOIN new_events e
  ORDER BY e.n
  RETURNING global_position::text, transaction_id::text, stream_version::text`

/**
 * Appends events to a stream if it is at the expected version, with their metadata; fails with
 * StreamVersionConflict otherwise, having written nothing. Appending no events is a no-op.
 */
export const appendToStream = <Event>(request: AppendRequest<Event>) =>
  Effect.gen(function* () {
    const { streamId, expected, events, catalog, context } = request
    if (events.length === 0) {
      const version = ExpectedVersion.$match(expected, {
        Exact: ({ version }) => version,
        NoStream: () => 0n,
        Any: () => -1n,
      })
      return { nextVersion: version, recorded: [] } satisfies AppendResult<Event>
    }
    const sql = yield* SqlClient.SqlClient
    const now = yield* DateTime.now
    const stored = events.map((event) => catalog.encode(event))
    const eventIds = stored.map(() => uuidV7())
    const params = [
      streamId,
      categoryOf(streamId),
      context.partnerId,
      events.length,
      ExpectedVersion.$match(expected, {
        Exact: ({ version }) => String(version),
        NoStream: () => null,
        Any: () => null,
      }),
      eventIds,
      stored.map((event) => event.type),
      stored.map((event) => event.version),
      stored.map((event) => JSON.stringify(event.data)),
      context.requestId,
      context.idempotencyKey,
      context.causationId,
      context.correlationId,
      DateTime.toDate(now),
    ]
    const rows = yield* sql.unsafe<{
      global_position: string
      transaction_id: string
      stream_version: string
    }>(statement(expected), params)
    const last = rows.at(-1)
    if (last === undefined) {
      return yield* new StreamVersionConflict({ streamId, expected: expectedLabel(expected) })
    }
    const recorded = rows.map(
      (row, index): RecordedEvent<Event> => ({
        globalPosition: BigInt(row.global_position),
        transactionId: BigInt(row.transaction_id),
        streamId,
        streamVersion: BigInt(row.stream_version),
        eventId: eventIds[index] ?? "",
        type: stored[index]?.type ?? "",
        event: events[index] as Event,
        context,
        occurredAt: now,
      }),
    )
    return { nextVersion: BigInt(last.stream_version), recorded } satisfies AppendResult<Event>
  })

const expectedLabel = (expected: ExpectedVersion) =>
  ExpectedVersion.$match(expected, {
    NoStream: () => "no stream",
    Exact: ({ version }) => `version ${version}`,
    Any: () => "any version",
  })

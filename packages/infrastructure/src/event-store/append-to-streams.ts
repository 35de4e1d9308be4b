import { SqlClient } from "@effect/sql"
import { DateTime, Effect } from "effect"
import { uuidV7 } from "../ids/uuid-v7.js"
import type { AppendRequest, AppendResult } from "./append-to-stream.js"
import { ExpectedVersion } from "./expected-version.js"
import type { RecordedEvent } from "./recorded-event.js"
import { categoryOf } from "./stream-id.js"
import { StreamVersionConflict } from "./stream-version-conflict.js"

// The version bump and the insert run in one statement (`append_to_stream`, migration 0006, called for each
// stream by `append_to_streams`, migration 0012): one round trip, atomic without a transaction of its own,
// and a concurrent writer at the same expected version finds the row changed (it waits on the row lock,
// re-checks the version, and bumps nothing), so exactly one of them inserts.
const APPEND_STATEMENT = `SELECT call, appended_position::text AS appended_position, appended_transaction,
       appended_version::text AS appended_version
FROM append_to_streams($1::jsonb, $2)`

/** A row the append function returns: one per event appended, none for a call whose version conflicted. */
interface AppendedRow {
  readonly call: number
  readonly appended_position: string
  readonly appended_transaction: string
  readonly appended_version: string
}

const expectation = (expected: ExpectedVersion) =>
  ExpectedVersion.$match(expected, {
    NoStream: () => ["no_stream", null] as const,
    Exact: ({ version }) => ["exact", String(version)] as const,
    Any: () => ["any", null] as const,
  })

const expectedLabel = (expected: ExpectedVersion) =>
  ExpectedVersion.$match(expected, {
    NoStream: () => "no stream",
    Exact: ({ version }) => `version ${version}`,
    Any: () => "any version",
  })

// One stream's append as the function's JSON call (payloads as JSON values, not strings), and its event ids.
const callOf = <Event>(request: AppendRequest<Event>) => {
  const { streamId, expected, events, catalog, context } = request
  const stored = events.map((event) => catalog.encode(event))
  const eventIds = stored.map(() => uuidV7())
  const [mode, expectedVersion] = expectation(expected)
  const call = {
    stream_id: streamId,
    category: categoryOf(streamId),
    partner_id: context.partnerId,
    expectation: mode,
    expected_version: expectedVersion,
    event_ids: eventIds,
    types: stored.map((event) => event.type),
    schema_versions: stored.map((event) => event.version),
    data: stored.map((event) => event.data),
    request_id: context.requestId,
    idempotency_key: context.idempotencyKey,
    causation_id: context.causationId,
    correlation_id: context.correlationId,
    ...(request.snapshot === undefined ? {} : { snapshot: request.snapshot }),
  }
  return { call, eventIds, types: call.types }
}

// One stream's result from the rows of its call; a conflict when there are none.
const resultOf = <Event>(
  request: AppendRequest<Event>,
  call: { readonly eventIds: ReadonlyArray<string>; readonly types: ReadonlyArray<string> },
  rows: ReadonlyArray<AppendedRow>,
  now: DateTime.Utc,
): Effect.Effect<AppendResult<Event>, StreamVersionConflict> => {
  const { streamId, expected, events, context } = request
  const last = rows.at(-1)
  if (last === undefined) {
    return Effect.fail(new StreamVersionConflict({ streamId, expected: expectedLabel(expected) }))
  }
  const recorded = rows.map(
    (row, index): RecordedEvent<Event> => ({
      globalPosition: BigInt(row.appended_position),
      transactionId: BigInt(row.appended_transaction),
      streamId,
      streamVersion: BigInt(row.appended_version),
      eventId: call.eventIds[index] ?? "",
      type: call.types[index] ?? "",
      event: events[index] as Event,
      context,
      occurredAt: now,
    }),
  )
  return Effect.succeed({ nextVersion: BigInt(last.appended_version), recorded })
}

/**
 * Appends to several streams in one round trip, each at its expected version as `appendToStream` does. When
 * one stream fails its expectation (StreamVersionConflict), the others may already be written: run it in a
 * transaction that the failure rolls back (the unit of work does). Every request must have events.
 */
export const appendToStreams = <Event>(requests: ReadonlyArray<AppendRequest<Event>>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* DateTime.now
    const calls = requests.map(callOf)
    const rows = yield* sql.unsafe<AppendedRow>(APPEND_STATEMENT, [
      JSON.stringify(calls.map(({ call }) => call)),
      DateTime.toDate(now),
    ])
    const rowsOf = requests.map((): Array<AppendedRow> => [])
    for (const row of rows) rowsOf[row.call]?.push(row)
    return yield* Effect.forEach(
      requests,
      (request, n): Effect.Effect<AppendResult<Event>, StreamVersionConflict> =>
        resultOf(request, calls[n] ?? { eventIds: [], types: [] }, rowsOf[n] ?? [], now),
    )
  })

import { SqlClient } from "@effect/sql"
import type { EventCatalog } from "@points/domain"
import { DateTime, Effect } from "effect"
import { uuidV7 } from "../ids/uuid-v7.js"
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
  /** The stream's state after these events, as JSON, kept beside the stream (see migration 0011). */
  readonly snapshot?: unknown
}

/** Where the appended events landed. */
export interface AppendResult<Event> {
  /** The stream's version after the append: the version of its last event. */
  readonly nextVersion: bigint
  /** The events as the log now holds them. */
  readonly recorded: ReadonlyArray<RecordedEvent<Event>>
}

// The version bump and the insert run in one statement (the `append_to_stream` function, migration 0006):
// one round trip, atomic without a transaction of its own, and a concurrent writer at the same expected
// version finds the row changed (it waits on the row lock, re-checks the version, and bumps nothing), so
// exactly one of them inserts.
/**
 * The call of the append function with its parameters numbered from `first`: 14 of them, or 15 with a
 * snapshot (the overload of migration 0011, which also stores it; without one the plain function is called,
 * one PL/pgSQL frame fewer).
 */
export const appendFunctionCall = (first: number, withSnapshot: boolean) => {
  const params = Array.from({ length: withSnapshot ? 15 : 14 }, (_, i) => `$${first + i}`)
  if (withSnapshot) params[14] = `${params[14]}::jsonb`
  return `append_to_stream(${params.join(", ")})`
}

const expectation = (expected: ExpectedVersion) =>
  ExpectedVersion.$match(expected, {
    NoStream: () => ["no_stream", null] as const,
    Exact: ({ version }) => ["exact", String(version)] as const,
    Any: () => ["any", null] as const,
  })

/** One stream's append as the call's parameters (see appendFunctionCall), and what recording it needs. */
export const appendCall = <Event>(request: AppendRequest<Event>, now: DateTime.Utc) => {
  const { streamId, expected, events, catalog, context } = request
  const stored = events.map((event) => catalog.encode(event))
  const eventIds = stored.map(() => uuidV7())
  const [mode, expectedVersion] = expectation(expected)
  const params = [
    streamId,
    categoryOf(streamId),
    context.partnerId,
    mode,
    expectedVersion,
    eventIds,
    stored.map((event) => event.type),
    stored.map((event) => event.version),
    stored.map((event) => JSON.stringify(event.data)),
    context.requestId,
    context.idempotencyKey,
    context.causationId,
    context.correlationId,
    DateTime.toDate(now),
    ...(request.snapshot === undefined ? [] : [JSON.stringify(request.snapshot)]),
  ]
  return { params, eventIds, types: stored.map((event) => event.type) }
}

/** A row the append function returns: one per event appended, none on a version conflict. */
export interface AppendedRow {
  readonly appended_position: string
  readonly appended_transaction: string
  readonly appended_version: string
}

/** The result of one stream's append from the rows the function returned for it; a conflict when none. */
export const appendResultOf = <Event>(
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
 * Appends events to a stream if it is at the expected version, with their metadata; fails with
 * StreamVersionConflict otherwise, having written nothing. Appending no events is a no-op.
 */
export const appendToStream = <Event>(request: AppendRequest<Event>) =>
  Effect.gen(function* () {
    const { expected, events } = request
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
    const call = appendCall(request, now)
    const rows = yield* sql.unsafe<AppendedRow>(
      `SELECT * FROM ${appendFunctionCall(1, request.snapshot !== undefined)}`,
      call.params,
    )
    return yield* appendResultOf(request, call, rows, now)
  })

const expectedLabel = (expected: ExpectedVersion) =>
  ExpectedVersion.$match(expected, {
    NoStream: () => "no stream",
    Exact: ({ version }) => `version ${version}`,
    Any: () => "any version",
  })

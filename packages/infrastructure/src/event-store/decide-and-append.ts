import { SqlClient } from "@effect/sql"
import { type Decider, InvariantViolation } from "@points/domain"
import { Effect, FiberRef, Option, Schema } from "effect"
import type { AppendRequest } from "./append-to-stream.js"
import { appendToStreams } from "./append-to-streams.js"
import { expectVersion } from "./expected-version.js"
import { InlineProjection } from "./inline-projection.js"
import { isDeadlock, type LockedStream, lockStreams } from "./lock-streams.js"
import { LogNotifier } from "./log-notifier.js"
import { readStream } from "./read-stream.js"
import type { AppendContext, RecordedEvent } from "./recorded-event.js"
import type { AnyStreamHandle } from "./stream-handle.js"
import { StreamVersionConflict } from "./stream-version-conflict.js"

type StateOf<H> = H extends { readonly decider: Decider<infer _C, infer _E, infer S, infer _X> } ? S : never
type EventOf<H> = H extends { readonly decider: Decider<infer _C, infer E, infer _S, infer _X> } ? E : never

/** The state of every stream of a unit of work, by the name the caller gave it. */
export type States<Streams> = { readonly [K in keyof Streams]: StateOf<Streams[K]> }

/** The events a decision appends, by stream name; a stream left out or empty is only read. */
export type Decision<Streams> = { readonly [K in keyof Streams]?: ReadonlyArray<EventOf<Streams[K]>> }

/** What a unit of work did: each stream's state after it, and the events it appended as recorded. */
export interface Outcome<Streams> {
  readonly states: States<Streams>
  readonly appended: { readonly [K in keyof Streams]: ReadonlyArray<RecordedEvent<EventOf<Streams[K]>>> }
}

/** How many times a decision is retried when another writer changed one of its streams in between. */
export const DEFAULT_MAX_ATTEMPTS = 5

/**
 * Whether a unit of work inside a caller's transaction runs in a savepoint of its own, retried there on a
 * version conflict (true, the default), or directly in the caller's transaction (false): one round trip less,
 * and every failure, a conflict included, is left to the caller, who must then roll its whole transaction
 * back (a failed statement has aborted it) and may run it again with savepoints.
 */
export const unitOfWorkSavepoint = FiberRef.unsafeMake(true)

// A stream only read that did not exist at load had no row to lock: it must still not exist at commit.
const stillAbsent = (streamId: string, partnerId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // FOR SHARE waits for a concurrent creator of the stream to finish, then sees it.
    const rows = yield* sql<{ version: string }>`
      SELECT version::text AS version FROM streams
      WHERE stream_id = ${streamId} AND partner_id = ${partnerId} FOR SHARE`
    if (rows.length > 0) {
      return yield* new StreamVersionConflict({ streamId, expected: "no stream (read only)" })
    }
  })

// The snapshot kept beside a locked stream, when it is of the handle's format and decodes; null otherwise.
const snapshotOf = (handle: AnyStreamHandle, stream: LockedStream) => {
  const stored = stream.snapshot as { readonly name?: unknown; readonly state?: unknown } | null
  if (
    handle.snapshot === undefined ||
    stream.snapshotVersion === null ||
    stored?.name !== handle.snapshot.name
  ) {
    return null
  }
  const state = Schema.decodeUnknownOption(handle.snapshot.schema)(stored.state)
  return Option.isSome(state) ? { version: stream.snapshotVersion, state: state.value } : null
}

/**
 * A locked stream's state and version: from its snapshot, with the events after it folded on top (none when
 * every append kept the snapshot), or from all its events. A stream absent at the lock is at version 0.
 */
export const loadState = (handle: AnyStreamHandle, partnerId: string, stream: LockedStream | undefined) =>
  Effect.gen(function* () {
    const initial: unknown = handle.decider.initialState
    if (stream === undefined) return { version: 0n, state: initial }
    const start = snapshotOf(handle, stream) ?? { version: 0n, state: initial }
    if (start.version === stream.version) return { version: stream.version, state: start.state }
    const read = yield* readStream(handle.streamId, partnerId, start.version)
    if (read.version !== stream.version) {
      return yield* Effect.die(
        new InvariantViolation(
          `stream ${handle.streamId} read at ${read.version}, locked at ${stream.version}`,
        ),
      )
    }
    const state: unknown = read.events.reduce(
      (folded, recorded) => handle.decider.evolve(folded, recorded.event),
      start.state,
    )
    return { version: stream.version, state }
  })

/**
 * Locks and loads every stream (for the context's partner), runs the decision on their states, and appends
 * what it decided to each stream at the version it was loaded at, all in one transaction with the inline
 * read models. Existing streams are locked at load (FOR UPDATE, or FOR SHARE when marked `readOnly`), so
 * concurrent writers of one stream queue instead of failing, and no decision rests on a state that changes
 * under it. Only the creation of a stream is optimistic: a stream created by another writer after the load
 * is a version conflict (and so is a deadlock between lockers), on which the whole unit is retried from the
 * load, at most `maxAttempts` times. A refusal from the decision appends nothing and is returned as is.
 */
export const decideAndAppend = <Streams extends Record<string, AnyStreamHandle>, X, R>(
  streams: Streams,
  decide: (states: States<Streams>) => Effect.Effect<Decision<Streams>, X, R>,
  context: AppendContext,
  options: { readonly maxAttempts?: number } = {},
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const projection = yield* InlineProjection
    const notifier = yield* LogNotifier
    const names = Object.keys(streams) as Array<keyof Streams & string>

    const attempt = Effect.gen(function* () {
      const handles = names.map((name) => [name, streams[name] as AnyStreamHandle] as const)
      const locked = yield* lockStreams({
        partnerId: context.partnerId,
        write: handles.filter(([, h]) => h.access !== "read").map(([, h]) => h.streamId),
        read: handles.filter(([, h]) => h.access === "read").map(([, h]) => h.streamId),
      })
      const loaded = yield* Effect.forEach(handles, ([name, handle]) =>
        Effect.map(loadState(handle, context.partnerId, locked.get(handle.streamId)), (stream) => ({
          name,
          handle,
          ...stream,
        })),
      )
      const states = Object.fromEntries(
        loaded.map((stream) => [stream.name, stream.state]),
      ) as States<Streams>
      const decision = yield* decide(states)
      const after: Record<string, unknown> = {}
      const appended: Record<string, ReadonlyArray<RecordedEvent>> = {}
      const writes: Array<{
        readonly name: string
        readonly stateBefore: unknown
        readonly request: AppendRequest<unknown>
      }> = []
      for (const stream of loaded) {
        const handle = stream.handle
        const events: ReadonlyArray<unknown> = decision[stream.name] ?? []
        after[stream.name] = events.reduce(handle.decider.evolve, stream.state)
        appended[stream.name] = []
        if (events.length === 0) {
          if (stream.version === 0n) yield* stillAbsent(handle.streamId, context.partnerId)
          continue
        }
        const snapshot = handle.snapshot
        writes.push({
          name: stream.name,
          stateBefore: stream.state,
          request: {
            streamId: handle.streamId,
            expected: expectVersion(stream.version),
            events,
            catalog: handle.catalog,
            context,
            ...(snapshot === undefined
              ? {}
              : {
                  snapshot: {
                    name: snapshot.name,
                    state: Schema.encodeSync(snapshot.schema)(after[stream.name]),
                  },
                }),
          },
        })
      }
      // Every stream's events in one round trip (the streams stay locked until commit), then the read models.
      const results = writes.length === 0 ? [] : yield* appendToStreams(writes.map((write) => write.request))
      for (const [index, write] of writes.entries()) {
        const recorded = results[index]?.recorded ?? []
        appended[write.name] = recorded
        yield* projection.apply({
          streamId: write.request.streamId,
          partnerId: context.partnerId,
          stateBefore: write.stateBefore,
          events: recorded,
          state: after[write.name],
        })
      }
      return { states: after, appended } as unknown as Outcome<Streams>
    })

    const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
    const inCallersTransaction = Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))
    const outcome =
      inCallersTransaction && !(yield* FiberRef.get(unitOfWorkSavepoint))
        ? yield* attempt
        : yield* sql.withTransaction(attempt).pipe(
            Effect.retry({
              while: (error) => error instanceof StreamVersionConflict || isDeadlock(error),
              times: maxAttempts - 1,
            }),
          )
    yield* notifier.committed
    return outcome
  })

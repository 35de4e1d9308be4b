import type { EventCatalog } from "@points/domain"
import { Effect } from "effect"
import { appendToStreams } from "./append-to-streams.js"
import { ExpectedVersion } from "./expected-version.js"
import type { AppendContext, RecordedEvent } from "./recorded-event.js"
import type { StreamId } from "./stream-id.js"

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

/**
 * Appends events to a stream if it is at the expected version, with their metadata; fails with
 * StreamVersionConflict otherwise, having written nothing. Appending no events is a no-op.
 */
export const appendToStream = <Event>(request: AppendRequest<Event>) => {
  if (request.events.length === 0) {
    const version = ExpectedVersion.$match(request.expected, {
      Exact: ({ version }) => version,
      NoStream: () => 0n,
      Any: () => -1n,
    })
    return Effect.succeed<AppendResult<Event>>({ nextVersion: version, recorded: [] })
  }
  return Effect.map(appendToStreams([request]), ([result]) => result as AppendResult<Event>)
}

import type { DateTime } from "effect"
import type { StreamId } from "./stream-id.js"

/** Who caused an append and why, recorded beside each of its events. */
export interface AppendContext {
  readonly partnerId: string
  readonly requestId: string | null
  readonly idempotencyKey: string | null
  readonly causationId: string | null
  readonly correlationId: string | null
}

/** An event as the log holds it: the domain event with its place in the log and its metadata. */
export interface RecordedEvent<Event = unknown> {
  readonly globalPosition: bigint
  readonly transactionId: bigint
  readonly streamId: StreamId
  readonly streamVersion: bigint
  readonly eventId: string
  readonly type: string
  readonly event: Event
  readonly context: AppendContext
  readonly occurredAt: DateTime.Utc
}

/** A place in the global log in commit order: the transaction that wrote an event, and its position. */
export interface LogCheckpoint {
  readonly transactionId: bigint
  readonly globalPosition: bigint
}

/** The place before the first event. */
export const logStart: LogCheckpoint = { transactionId: 0n, globalPosition: 0n }

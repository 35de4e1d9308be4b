import type { EventCatalog } from "@points/domain"
import { DateTime, Effect } from "effect"
import type { RecordedEvent } from "./recorded-event.js"
import { categories, categoryOf, type StreamId } from "./stream-id.js"

/** The columns of `events` as the driver returns them (int8 and xid8 arrive as strings). */
export interface EventRow {
  readonly global_position: string
  readonly transaction_id: string
  readonly stream_id: string
  readonly stream_version: string
  readonly event_id: string
  readonly event_type: string
  readonly schema_version: number
  readonly data: Record<string, unknown>
  readonly partner_id: string
  readonly request_id: string | null
  readonly idempotency_key: string | null
  readonly causation_id: string | null
  readonly correlation_id: string | null
  readonly occurred_at: Date
}

/** The column list of a read, in the order of EventRow, with `data` selected as the expression given. */
export const eventColumnsWith = (data: string) =>
  `global_position, transaction_id::text AS transaction_id, stream_id, stream_version, event_id, event_type, schema_version, ${data} AS data, partner_id, request_id, idempotency_key, causation_id, correlation_id, occurred_at`

/** The column list every read selects, in the order of EventRow. */
export const eventColumns = eventColumnsWith("data")

/** Decodes a row with the catalog of its stream's category, upcasting older payload versions. */
export const decodeEventRow = (row: EventRow) => {
  const streamId = row.stream_id as StreamId
  // Every category's catalog decodes its own events; the log as a whole holds any of them.
  const catalog = categories[categoryOf(streamId)] as unknown as EventCatalog<unknown>
  return Effect.map(
    catalog.decode({ type: row.event_type, version: row.schema_version, data: row.data }),
    (event): RecordedEvent => ({
      globalPosition: BigInt(row.global_position),
      transactionId: BigInt(row.transaction_id),
      streamId,
      streamVersion: BigInt(row.stream_version),
      eventId: row.event_id,
      type: row.event_type,
      event,
      context: {
        partnerId: row.partner_id,
        requestId: row.request_id,
        idempotencyKey: row.idempotency_key,
        causationId: row.causation_id,
        correlationId: row.correlation_id,
      },
      occurredAt: DateTime.unsafeFromDate(row.occurred_at),
    }),
  )
}

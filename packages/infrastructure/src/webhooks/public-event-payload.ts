/** A `public_events` row as the dispatcher reads it. */
export interface PublicEventRow {
  readonly id: string
  readonly type: string
  readonly occurred_at: Date
  readonly data: Readonly<Record<string, unknown>>
}

/**
 * The body of a webhook: exactly the JSON of the public event `{id, type, timestamp, data}`, `timestamp`
 * being when it occurred (ISO-8601 UTC). Built once per attempt and signed as sent, byte for byte.
 */
export const webhookBodyOf = (event: PublicEventRow): string =>
  JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.occurred_at.toISOString(),
    data: event.data,
  })

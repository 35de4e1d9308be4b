import { SqlClient } from "@effect/sql"
import { PublicEventResource, ResourceNotFound, type WebhookEndpoint } from "@points/domain"
import { Effect, Option, Schema } from "effect"
import { equals, type Filter, type PageRequest } from "./keyset-page.js"
import { selectPageOfCommits } from "./late-commit-page.js"
import { selectById } from "./select-by-id.js"

/** A `public_events` row as the inline projection writes it: `data` is the resource as its GET answered. */
export interface PublicEventRow {
  readonly id: string
  readonly partner_id: string
  readonly type: WebhookEndpoint.PublicEventType
  readonly occurred_at: string
  readonly data: object
  readonly global_position: string
}

const insertStatement = `
  INSERT INTO public_events (id, partner_id, type, occurred_at, data, global_position)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::jsonb[], $6::bigint[])`

/** The insert of public event rows as a statement and its parameters, to run alone or before another. */
export const publicEventsInsert = (rows: ReadonlyArray<PublicEventRow>) => ({
  statement: insertStatement,
  params: [
    rows.map((row) => row.id),
    rows.map((row) => row.partner_id),
    rows.map((row) => row.type),
    rows.map((row) => row.occurred_at),
    rows.map((row) => JSON.stringify(row.data)),
    rows.map((row) => row.global_position),
  ],
})

/** Appends public event rows in one statement (the table is append-only: a second row of an id fails). */
export const insertPublicEvents = (rows: ReadonlyArray<PublicEventRow>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const insert = publicEventsInsert(rows)
    return sql.unsafe(insert.statement, insert.params)
  })

/** What `publicEventOf` needs of a `public_events` row, as PostgreSQL returns it (or as written). */
export interface StoredPublicEvent {
  readonly id: string
  readonly type: string
  readonly occurred_at: Date | string
  readonly data: unknown
}

const decodePublicEvent = Schema.decodeUnknownSync(PublicEventResource)

/**
 * The public event object of a `public_events` row, `{id, type, timestamp, data}`: what `/api/events` answers
 * and webhooks carry. Decoded through the resource schemas, so `data`'s keys come in the order its GET
 * answers them (jsonb does not keep key order) and `JSON.stringify` of it is byte for byte that GET's body.
 * Throws on a row that is not a public event: a corrupt table, a defect.
 */
export const publicEventOf = (row: StoredPublicEvent): PublicEventResource =>
  decodePublicEvent({
    id: row.id,
    type: row.type,
    timestamp: new Date(row.occurred_at).toISOString(),
    data: row.data,
  })

interface PublicEventDatabaseRow {
  readonly id: string
  readonly type: string
  readonly occurred_at: Date
  readonly data: unknown
}

const columns = "id, type, occurred_at, data"

/** A partner's public event; LE0002 when the partner has none with this id (another partner's included). */
export const getPublicEvent = (partnerId: string, eventId: string) =>
  Effect.flatMap(
    selectById<PublicEventDatabaseRow>({ table: "public_events", columns, partnerId, id: eventId }),
    Option.match({
      onNone: () => Effect.fail(new ResourceNotFound({ resource: "event", id: eventId })),
      onSome: (row) => Effect.sync(() => publicEventOf(row)),
    }),
  )

/** What `GET /api/events` filters and pages by (the service checks `type` and `since`). */
export interface ListPublicEventsRequest extends PageRequest {
  readonly type?: WebhookEndpoint.PublicEventType | undefined
  /** Only events that happened at or after this instant. */
  readonly since?: Date | undefined
}

const occurredSince =
  (since: Date): Filter =>
  (bind) =>
    `occurred_at >= ${bind(since.toISOString())}::timestamptz`

/**
 * A page of a partner's public events, oldest first, optionally of one type and/or since an instant. An event
 * that commits after a page beyond it was read comes with a later page (selectPageOfCommits): none skipped.
 */
export const listPublicEvents = (partnerId: string, request: ListPublicEventsRequest) =>
  selectPageOfCommits({
    list: "events",
    table: "public_events",
    columns,
    key: "id",
    scope: [equals("partner_id", partnerId)],
    filters: [
      ...(request.type === undefined ? [] : [equals("type", request.type)]),
      ...(request.since === undefined ? [] : [occurredSince(request.since)]),
    ],
    request,
    keyOf: (row: PublicEventDatabaseRow & { readonly seen: string }) => row.id,
    toResource: publicEventOf,
  })

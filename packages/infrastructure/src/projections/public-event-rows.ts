import type { SqlClient, SqlError } from "@effect/sql"
import { Order, type ResourceNotFound, User, WebhookEndpoint } from "@points/domain"
import { Effect } from "effect"
import type { StreamChange } from "../event-store/inline-projection.js"
import type { RecordedEvent } from "../event-store/recorded-event.js"
import { getOrder, orderRowOf, upsertOrders } from "./orders.js"
import { insertPublicEvents, type PublicEventRow } from "./public-events.js"
import { isoOf } from "./row-batches.js"
import { getTransaction } from "./transactions.js"
import { getUser, upsertUsers, userRowOf } from "./users.js"

/** The categories whose events may be announced: the streams behind users, transactions and orders. */
export type AnnouncingCategory = "user" | "ledger" | "order"

interface Announced {
  readonly recorded: RecordedEvent
  readonly subject: WebhookEndpoint.PublicEventSubject
  readonly index: number
}

// The resource as its GET answers it, read in the unit of work's transaction: a public event's data is the
// GET's answer at that moment, by construction. A missing resource here is a projection bug.
const render = (partnerId: string, announced: Announced) => {
  const { recorded, subject } = announced
  const read: Effect.Effect<object, SqlError.SqlError | ResourceNotFound, SqlClient.SqlClient> =
    subject.resource === "user"
      ? getUser(partnerId, subject.resourceId)
      : subject.resource === "transaction"
        ? getTransaction(partnerId, subject.resourceId)
        : getOrder(partnerId, subject.resourceId)
  return Effect.map(
    Effect.catchTag(read, "ResourceNotFound", Effect.die),
    (data): PublicEventRow => ({
      id: recorded.eventId,
      partner_id: partnerId,
      type: subject.type,
      occurred_at: isoOf(recorded.occurredAt),
      data,
      global_position: String(recorded.globalPosition),
    }),
  )
}

// Writes the row of an intermediate state of a user or order stream (a state the final row overwrites).
const writeIntermediateRow = (category: "user" | "order", partnerId: string, state: unknown) => {
  if (category === "user") {
    const row = userRowOf(partnerId, state as User.UserState)
    return row === null ? Effect.void : Effect.asVoid(upsertUsers([row]))
  }
  const row = orderRowOf(partnerId, state as Order.OrderState)
  return row === null ? Effect.void : Effect.asVoid(upsertOrders([row]))
}

const evolveOf = (category: "user" | "order") =>
  (category === "user" ? User.evolve : Order.evolve) as (state: unknown, event: unknown) => unknown

/**
 * Writes one changed stream's read models with `writeRows`, and a `public_events` row for each of its events
 * that is announced (WebhookEndpoint.publicEventSubjectOf), whose data is the resource as its GET answers
 * right after that event. Usually the announced event is the change's last, and its data is read after
 * `writeRows`. When a unit appends an announced event followed by others to one user or order stream, the
 * state right after it (folded with the domain's evolve) is written to the read model first and read back,
 * and `writeRows` then writes the final state over it. Transactions never change, so every `points.*` event
 * is read after `writeRows`.
 */
export const writeWithPublicEvents = <E, R>(
  category: AnnouncingCategory,
  change: StreamChange,
  writeRows: Effect.Effect<void, E, R>,
) =>
  Effect.gen(function* () {
    const announced: Array<Announced> = []
    change.events.forEach((recorded, index) => {
      const event = recorded.event as WebhookEndpoint.AnnounceableEvent
      const subject = WebhookEndpoint.publicEventSubjectOf(event)
      if (subject !== null) announced.push({ recorded, subject, index })
    })
    if (announced.length === 0) return yield* writeRows
    const last = change.events.length - 1
    const rows: Array<PublicEventRow> = []
    const afterRows: Array<Announced> = []
    if (category === "ledger") {
      afterRows.push(...announced)
    } else {
      const evolve = evolveOf(category)
      let state = change.stateBefore
      let folded = 0
      for (const item of announced) {
        if (item.index === last) {
          afterRows.push(item)
          continue
        }
        for (; folded <= item.index; folded++) state = evolve(state, change.events[folded]?.event)
        yield* writeIntermediateRow(category, change.partnerId, state)
        rows.push(yield* render(change.partnerId, item))
      }
    }
    yield* writeRows
    for (const item of afterRows) rows.push(yield* render(change.partnerId, item))
    yield* insertPublicEvents(rows)
  })

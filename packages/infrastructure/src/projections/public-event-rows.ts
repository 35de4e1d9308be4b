import type { SqlClient, SqlError } from "@effect/sql"
import { type Ledger, Order, type ResourceNotFound, User, WebhookEndpoint } from "@points/domain"
import { Effect } from "effect"
import type { StreamChange } from "../event-store/inline-projection.js"
import type { RecordedEvent } from "../event-store/recorded-event.js"
import { getOrder, orderRowOf, upsertOrders } from "./orders.js"
import { insertPublicEvents, type PublicEventRow } from "./public-events.js"
import { isoOf } from "./row-batches.js"
import { transactionResourceOf, transactionRowOf } from "./transactions.js"
import { getUser, upsertUsers, userRowOf } from "./users.js"

/** The categories whose rows change with their announced events: the streams behind users and orders. */
export type AnnouncingCategory = "user" | "order"

interface Announced {
  readonly recorded: RecordedEvent
  readonly subject: WebhookEndpoint.PublicEventSubject
  readonly index: number
}

const publicEventRowOf = (partnerId: string, announced: Announced, data: object): PublicEventRow => ({
  id: announced.recorded.eventId,
  partner_id: partnerId,
  type: announced.subject.type,
  occurred_at: isoOf(announced.recorded.occurredAt),
  data,
  global_position: String(announced.recorded.globalPosition),
})

// The resource as its GET answers it, read in the unit of work's transaction: a public event's data is the
// GET's answer at that moment, by construction. A missing resource here is a projection bug.
const render = (partnerId: string, announced: Announced) => {
  const { subject } = announced
  const read: Effect.Effect<object, SqlError.SqlError | ResourceNotFound, SqlClient.SqlClient> =
    subject.resource === "user"
      ? getUser(partnerId, subject.resourceId)
      : getOrder(partnerId, subject.resourceId)
  return Effect.map(Effect.catchTag(read, "ResourceNotFound", Effect.die), (data) =>
    publicEventRowOf(partnerId, announced, data),
  )
}

const announcedIn = (change: StreamChange) => {
  const announced: Array<Announced> = []
  change.events.forEach((recorded, index) => {
    const event = recorded.event as WebhookEndpoint.AnnounceableEvent
    const subject = WebhookEndpoint.publicEventSubjectOf(event)
    if (subject !== null) announced.push({ recorded, subject, index })
  })
  return announced
}

/**
 * The public event rows of a ledger stream's change (`points.added`, `points.subtracted`). A transaction
 * never changes and its resource is a function of its event (the row the projection writes), so the data is
 * what its GET answers without reading it back, and the rows can go in the projection's own statement.
 */
export const ledgerPublicEventRows = (change: StreamChange): ReadonlyArray<PublicEventRow> =>
  announcedIn(change).map((announced) =>
    publicEventRowOf(
      change.partnerId,
      announced,
      transactionResourceOf(
        transactionRowOf(
          change.partnerId,
          announced.recorded.globalPosition,
          announced.recorded.event as Ledger.MovementEvent,
        ),
      ),
    ),
  )

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
 * Writes one changed user or order stream's read models with `writeRows`, and a `public_events` row for each
 * of its events that is announced (WebhookEndpoint.publicEventSubjectOf), whose data is the resource as its
 * GET answers right after that event. Usually the announced event is the change's last, and its data is read
 * after `writeRows`. When a unit appends an announced event followed by others to one stream, the state right
 * after it (folded with the domain's evolve) is written to the read model first and read back, and
 * `writeRows` then writes the final state over it.
 */
export const writeWithPublicEvents = <E, R>(
  category: AnnouncingCategory,
  change: StreamChange,
  writeRows: Effect.Effect<void, E, R>,
) =>
  Effect.gen(function* () {
    const announced = announcedIn(change)
    if (announced.length === 0) return yield* writeRows
    const last = change.events.length - 1
    const rows: Array<PublicEventRow> = []
    const afterRows: Array<Announced> = []
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
    yield* writeRows
    for (const item of afterRows) rows.push(yield* render(change.partnerId, item))
    yield* insertPublicEvents(rows)
  })

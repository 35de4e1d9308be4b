import { Schema } from "effect"

/** The public event types webhooks carry and `/api/events` lists, in their canonical order. */
export const publicEventTypes = [
  "user.created",
  "user.activated",
  "user.closed",
  "points.added",
  "points.subtracted",
  "order.created",
  "order.status_changed",
] as const

/** A public event type an endpoint can subscribe to. */
export const PublicEventType = Schema.Literal(...publicEventTypes)
export type PublicEventType = typeof PublicEventType.Type

/** The set of types as stored: each once, in canonical order, so that the same choice always compares equal. */
export const normalizeEventTypes = (types: ReadonlyArray<PublicEventType>): ReadonlyArray<PublicEventType> =>
  publicEventTypes.filter((type) => types.includes(type))

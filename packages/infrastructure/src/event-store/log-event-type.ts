import type { EventCatalog } from "@points/domain"
import { type Category, categories } from "./stream-id.js"

type EventOf<C> = C extends EventCatalog<infer Event> ? Event : never

/** Any event the global log holds: the events of every stream category. */
export type LogEvent = EventOf<(typeof categories)[Category]>

/** The type of an event in the log, as stored (`"UserRegistered"`, `"PointsAdded"`, ...): its `_tag`. */
export type LogEventType = LogEvent extends { readonly _tag: infer Tag } ? Tag : never

/** The events of the log of the given types: `LogEventOfType<"UserRegistered">` is `User.UserRegistered`. */
export type LogEventOfType<Type extends LogEventType> = Extract<LogEvent, { readonly _tag: Type }>

const known: ReadonlySet<string> = new Set(Object.values(categories).flatMap((catalog) => catalog.types))

/** Every event type the log can hold, sorted. */
export const logEventTypes: ReadonlyArray<LogEventType> = [...known].sort() as Array<LogEventType>

/**
 * Whether `type` is an event type the log can hold (the webhooks' `points.added` is not: it names a public
 * event).
 */
export const isLogEventType = (type: string): type is LogEventType => known.has(type)

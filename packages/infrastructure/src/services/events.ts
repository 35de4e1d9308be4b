import { InvalidParams, millisecondBoundOf, timestampProblem, WebhookEndpoint } from "@points/domain"
import { Effect, Schema } from "effect"
import { getPublicEvent, listPublicEvents } from "../projections/public-events.js"
import type { RequestContext } from "./request-context.js"

const isPublicEventType = Schema.is(WebhookEndpoint.PublicEventType)

const sinceInstant = (since: string): Effect.Effect<Date, InvalidParams> => {
  const instant = millisecondBoundOf(since)
  return instant !== null
    ? Effect.succeed(instant)
    : Effect.fail(new InvalidParams({ field: "since", problem: timestampProblem(since) ?? "is invalid" }))
}

/**
 * List events: a page of the partner's public events, oldest first, optionally of one type and/or since an
 * instant. GH1006 for an unknown type, a since that is no ISO-8601 timestamp, a bad limit or cursor.
 */
export const listEvents = (
  context: RequestContext,
  query: {
    readonly type?: string | undefined
    readonly since?: string | undefined
    readonly limit?: number | undefined
    readonly cursor?: string | undefined
  },
) =>
  Effect.gen(function* () {
    const { type, since, ...page } = query
    if (type !== undefined && !isPublicEventType(type)) {
      return yield* new InvalidParams({
        field: "type",
        problem: `must be one of ${WebhookEndpoint.publicEventTypes.join(", ")}`,
      })
    }
    const instant = since === undefined ? undefined : yield* sinceInstant(since)
    return yield* listPublicEvents(context.partnerId, { ...page, type, since: instant })
  }).pipe(Effect.withSpan("events.list"))

/** Get event; LE0002 when the partner has none with this id (another partner's included). */
export const getEvent = (context: RequestContext, eventId: string) =>
  getPublicEvent(context.partnerId, eventId).pipe(Effect.withSpan("events.get"))

import { SqlClient } from "@effect/sql"
import {
  InvalidParams,
  isUuid,
  Limits,
  millisecondBoundOf,
  ResourceNotFound,
  timestampProblem,
  WebhookEndpoint,
} from "@points/domain"
import { Effect, Option } from "effect"
import { readOnly, webhookStream } from "../event-store/stream-handle.js"
import type { PageRequest } from "../projections/keyset-page.js"
import { getWebhookEndpoint } from "../projections/webhook-endpoints.js"
import { selectDeliveriesPage } from "../webhooks/deliveries-page.js"
import { scheduleReplay, selectEventsBetween, selectPartnerEvents } from "../webhooks/schedule-replay.js"
import { appendContextOf, type RequestContext } from "./request-context.js"
import { webhookEndpointIdOf } from "./resource-ids.js"
import { runUnitOfWork } from "./run-unit-of-work.js"

/** The most events one replay request may select: a larger range is refused, to be split by the caller. */
export const MAX_REPLAY_EVENTS = 10_000

/** The most ids one replay request may name. */
export const MAX_REPLAY_IDS = Limits.replayEventIdsMax

/** What a replay selects: events by id, or those that occurred in `[since, until)`. */
export interface ReplayRequest {
  readonly since?: string | undefined
  readonly until?: string | undefined
  readonly event_ids?: ReadonlyArray<string> | undefined
}

const timestampOf = (field: string, text: string | undefined): Effect.Effect<Date | null, InvalidParams> => {
  if (text === undefined) return Effect.succeed(null)
  const at = millisecondBoundOf(text)
  return at !== null
    ? Effect.succeed(at)
    : Effect.fail(new InvalidParams({ field, problem: timestampProblem(text) ?? "is invalid" }))
}

/** The deliveries of one of the partner's endpoints, newest first; LE0002 for an endpoint it does not have. */
export const listWebhookDeliveries = (context: RequestContext, endpointId: string, request: PageRequest) =>
  Effect.gen(function* () {
    yield* getWebhookEndpoint(context.partnerId, endpointId)
    return yield* selectDeliveriesPage(context.partnerId, endpointId, request)
  }).pipe(Effect.withSpan("webhooks.deliveries"))

// The endpoint as its stream has it, read in a unit of work that only reads the stream: locked FOR SHARE until
// the caller's transaction ends. A disable (which locks it FOR UPDATE) either committed first and is seen
// here, or waits until the replayed attempts are scheduled and then ends them with the endpoint's others.
const lockedReplayTarget = (context: RequestContext, endpointId: string) =>
  Effect.gen(function* () {
    const id = yield* webhookEndpointIdOf(endpointId)
    const outcome = yield* runUnitOfWork(
      { endpoint: readOnly(webhookStream(id)) },
      (s) => Effect.as(WebhookEndpoint.replayTarget(s.endpoint, id), {}),
      appendContextOf(context),
    )
    // The state the unit decided on (it appended nothing), as the live endpoint it was accepted as.
    return yield* WebhookEndpoint.replayTarget(outcome.states.endpoint, id)
  })

// Runs `effect` in the caller's transaction (the idempotency record's), or in one of its own: the lock taken
// on the endpoint's stream must last until the attempts it guards are scheduled.
const inOneTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const nested = Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))
    return yield* nested ? effect : sql.withTransaction(effect)
  })

/**
 * Replays public events to one of the partner's endpoints: a new first attempt of each, keeping the event's
 * id. `event_ids` selects exactly those (any that is not the partner's event: LE0002, nothing replayed);
 * `since` / `until` select the events that occurred in `[since, until)` and that the endpoint subscribes to.
 * LE0002 for an endpoint the partner does not have; LE0008 for a disabled one (decided on its stream, locked
 * until the attempts are scheduled, so a concurrent disable comes wholly before or after); GH1006 for a bad
 * or empty selection, or one of more than MAX_REPLAY_EVENTS events.
 */
export const replayWebhookDeliveries = (
  context: RequestContext,
  endpointId: string,
  request: ReplayRequest,
) =>
  Effect.gen(function* () {
    const { partnerId } = context
    const endpoint = yield* lockedReplayTarget(context, endpointId)
    const byIds = request.event_ids !== undefined
    if (byIds && (request.since !== undefined || request.until !== undefined)) {
      return yield* new InvalidParams({
        field: "event_ids",
        problem: "cannot be combined with since or until",
      })
    }
    let eventIds: ReadonlyArray<string>
    if (byIds) {
      const ids = [...new Set(request.event_ids)]
      if (ids.length === 0 || ids.length > MAX_REPLAY_IDS) {
        return yield* new InvalidParams({
          field: "event_ids",
          problem: `must name 1 to ${MAX_REPLAY_IDS} events`,
        })
      }
      const known = yield* selectPartnerEvents(partnerId, ids.filter(isUuid))
      const unknown = ids.find((id) => !known.has(id))
      if (unknown !== undefined) return yield* new ResourceNotFound({ resource: "event", id: unknown })
      eventIds = ids
    } else {
      if (request.since === undefined && request.until === undefined) {
        return yield* new InvalidParams({ field: "", problem: "give since, until or event_ids" })
      }
      const since = yield* timestampOf("since", request.since)
      const until = yield* timestampOf("until", request.until)
      if (since !== null && until !== null && since.getTime() > until.getTime()) {
        return yield* new InvalidParams({ field: "until", problem: "must not be before since" })
      }
      eventIds = yield* selectEventsBetween({
        partnerId,
        since,
        until,
        types: endpoint.eventTypes,
        limit: MAX_REPLAY_EVENTS + 1,
      })
      if (eventIds.length > MAX_REPLAY_EVENTS) {
        return yield* new InvalidParams({
          // A field the request gave (with only `until`, it named `since`).
          field: request.since === undefined ? "until" : "since",
          problem: `selects more than ${MAX_REPLAY_EVENTS} events; replay a shorter range at a time`,
        })
      }
    }
    if (eventIds.length > 0) yield* scheduleReplay(partnerId, endpointId, eventIds)
    return { replayed: eventIds.length }
  }).pipe(inOneTransaction, Effect.withSpan("webhooks.replay"))

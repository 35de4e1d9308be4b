import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { PageOf, PublicEventResource, Timestamp, WebhookEndpoint } from "@points/domain"
import { Schema } from "effect"
import { ErrorAt } from "../api-error.js"
import { PathId, pageQuery, queryParams } from "../query.js"
import { Authentication } from "../security.js"

/** Query of List events. */
export const ListEventsQuery = Schema.Struct({
  type: Schema.optional(WebhookEndpoint.PublicEventType),
  /** ISO-8601 timestamp with a zone: only events that happened at or after it. */
  since: Schema.optional(Timestamp),
  ...pageQuery("events"),
})

/** The public events webhooks carry, to read back and audit. */
export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("listEvents", "/api/events")
      .setUrlParams(queryParams(ListEventsQuery))
      .addSuccess(PageOf(PublicEventResource))
      .addError(ErrorAt[400]),
  )
  .add(
    HttpApiEndpoint.get("getEvent", "/api/events/:event_id")
      .setPath(Schema.Struct({ event_id: PathId }))
      .addSuccess(PublicEventResource)
      .addError(ErrorAt[404]),
  )
  .middleware(Authentication) {}

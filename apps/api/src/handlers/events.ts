import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { PointsApi } from "@points/http-api"
import { getEvent, listEvents } from "@points/infrastructure"
import { forPartner } from "../http/answer.js"

/** The public events webhooks carry. */
export const EventsLive = HttpApiBuilder.group(PointsApi, "events", (handlers) =>
  handlers
    .handle("listEvents", ({ urlParams }) => forPartner((context) => listEvents(context, urlParams)))
    .handle("getEvent", ({ path }) => forPartner((context) => getEvent(context, path.event_id))),
)

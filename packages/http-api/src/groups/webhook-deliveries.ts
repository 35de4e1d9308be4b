import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Limits, PageOf, ReplayResultResource, Timestamp, WebhookDeliveryResource } from "@points/domain"
import { Schema } from "effect"
import { ErrorAt } from "../api-error.js"
import { boundedArray, jsonBody } from "../body.js"
import { IdempotencyKeyHeader } from "../idempotency-header.js"
import { IdText, PathId, pagingQuery, queryParams } from "../query.js"
import { Authentication } from "../security.js"

/**
 * Body of Replay: the events to send again to the endpoint, keeping their ids. Either `event_ids` (exactly
 * those), or `since` and/or `until` (ISO-8601, the events that occurred in `[since, until)` of the types the
 * endpoint subscribes to).
 */
export const ReplayBody = Schema.Struct({
  since: Schema.optional(Timestamp),
  until: Schema.optional(Timestamp),
  event_ids: Schema.optional(
    boundedArray(IdText, {
      min: 1,
      max: Limits.replayEventIdsMax,
      message: `must name 1 to ${Limits.replayEventIdsMax} events`,
    }),
  ),
}).pipe(Schema.annotations({ identifier: "ReplayWebhookEvents" }))

const endpointPath = Schema.Struct({ endpoint_id: PathId })

/** Query of List deliveries: paging only. */
export const WebhookDeliveriesQuery = pagingQuery("webhook_deliveries")

/** What became of the webhooks sent to an endpoint, and sending them again. */
export class WebhookDeliveriesGroup extends HttpApiGroup.make("webhookDeliveries")
  .add(
    HttpApiEndpoint.get("listDeliveries", "/api/webhooks/endpoints/:endpoint_id/deliveries")
      .setPath(endpointPath)
      .setUrlParams(queryParams(WebhookDeliveriesQuery))
      .addSuccess(PageOf(WebhookDeliveryResource))
      .addError(ErrorAt[400])
      .addError(ErrorAt[404]),
  )
  .add(
    HttpApiEndpoint.post("replay", "/api/webhooks/endpoints/:endpoint_id/replay")
      .setHeaders(IdempotencyKeyHeader)
      .setPath(endpointPath)
      .setPayload(jsonBody(ReplayBody))
      .addSuccess(ReplayResultResource, { status: 202 })
      .addError(ErrorAt[400])
      .addError(ErrorAt[404])
      .addError(ErrorAt[409])
      .addError(ErrorAt[422]),
  )
  .middleware(Authentication) {}

import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import {
  Description,
  Limits,
  PageOf,
  WebhookEndpoint,
  WebhookEndpointResource,
  WebhookEndpointWithSecretResource,
} from "@points/domain"
import { Schema } from "effect"
import { ErrorAt } from "../api-error.js"
import { boundedArray, jsonBody } from "../body.js"
import { IdempotencyKeyHeader } from "../idempotency-header.js"
import { PathId, pagingQuery, queryParams } from "../query.js"
import { Authentication } from "../security.js"

const EventTypes = boundedArray(WebhookEndpoint.PublicEventType, {
  min: 0,
  max: Limits.eventTypesMax,
  message: `must have at most ${Limits.eventTypesMax} items`,
})

/** Body of Create webhook endpoint; `event_types` empty or absent subscribes to every type. */
export const CreateWebhookEndpointBody = Schema.Struct({
  url: WebhookEndpoint.WebhookUrl,
  event_types: Schema.optional(EventTypes),
  description: Schema.optional(Schema.NullOr(Description)),
  enabled: Schema.optional(Schema.Boolean),
}).pipe(Schema.annotations({ identifier: "CreateWebhookEndpoint" }))

/** Body of Update webhook endpoint: only the fields to change; a null `description` clears it. */
export const UpdateWebhookEndpointBody = Schema.Struct({
  url: Schema.optional(WebhookEndpoint.WebhookUrl),
  event_types: Schema.optional(EventTypes),
  description: Schema.optional(Schema.NullOr(Description)),
  enabled: Schema.optional(Schema.Boolean),
}).pipe(Schema.annotations({ identifier: "UpdateWebhookEndpoint" }))

const endpointPath = Schema.Struct({ endpoint_id: PathId })

/** Query of List webhook endpoints: paging only. */
export const WebhookEndpointsQuery = pagingQuery("webhook_endpoints")

/** A partner's webhook endpoints; the signing secret is answered by create and rotate-secret only. */
export class WebhookEndpointsGroup extends HttpApiGroup.make("webhookEndpoints")
  .add(
    HttpApiEndpoint.post("createWebhookEndpoint", "/api/webhooks/endpoints")
      .setHeaders(IdempotencyKeyHeader)
      .setPayload(jsonBody(CreateWebhookEndpointBody))
      .addSuccess(WebhookEndpointWithSecretResource, { status: 201 })
      .addError(ErrorAt[400])
      .addError(ErrorAt[409])
      .addError(ErrorAt[422]),
  )
  .add(
    HttpApiEndpoint.get("listWebhookEndpoints", "/api/webhooks/endpoints")
      .setUrlParams(queryParams(WebhookEndpointsQuery))
      .addSuccess(PageOf(WebhookEndpointResource))
      .addError(ErrorAt[400]),
  )
  .add(
    HttpApiEndpoint.get("getWebhookEndpoint", "/api/webhooks/endpoints/:endpoint_id")
      .setPath(endpointPath)
      .addSuccess(WebhookEndpointResource)
      .addError(ErrorAt[404]),
  )
  .add(
    HttpApiEndpoint.patch("updateWebhookEndpoint", "/api/webhooks/endpoints/:endpoint_id")
      .setPath(endpointPath)
      .setPayload(jsonBody(UpdateWebhookEndpointBody))
      .addSuccess(WebhookEndpointResource)
      .addError(ErrorAt[400])
      .addError(ErrorAt[404]),
  )
  .add(
    HttpApiEndpoint.del("deleteWebhookEndpoint", "/api/webhooks/endpoints/:endpoint_id")
      .setPath(endpointPath)
      .addSuccess(WebhookEndpointResource)
      .addError(ErrorAt[404]),
  )
  .add(
    HttpApiEndpoint.post("rotateWebhookEndpointSecret", "/api/webhooks/endpoints/:endpoint_id/rotate-secret")
      .setHeaders(IdempotencyKeyHeader)
      .setPath(endpointPath)
      .addSuccess(WebhookEndpointWithSecretResource)
      .addError(ErrorAt[404])
      .addError(ErrorAt[409])
      .addError(ErrorAt[422]),
  )
  .middleware(Authentication) {}

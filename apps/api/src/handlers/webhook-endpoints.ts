import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { WebhookEndpointWithSecretResource } from "@points/domain"
import { PointsApi } from "@points/http-api"
import {
  getWebhookEndpointResource,
  listWebhookEndpointResources,
  removeWebhookEndpoint,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
  webhookEndpointCreation,
} from "@points/infrastructure"
import { Effect } from "effect"
import { Settings } from "../config.js"
import { forPartner } from "../http/answer.js"
import { idempotentPost } from "../http/idempotent-post.js"
import { writeOptions } from "../http/write-options.js"

// Whether private and loopback targets are accepted is the platform's setting, handed to the domain's rule.
const targetPolicy = Effect.map(Settings, (settings) => ({
  allowPrivateTargets: settings.webhookAllowPrivateTargets,
}))

/** A partner's webhook endpoints. */
export const WebhookEndpointsLive = HttpApiBuilder.group(PointsApi, "webhookEndpoints", (handlers) =>
  handlers
    .handle(
      "createWebhookEndpoint",
      ({ payload }) =>
        // The target's name is resolved before the request's transaction begins: no connection waits on DNS.
        Effect.flatMap(targetPolicy, (policy) =>
          Effect.flatMap(webhookEndpointCreation(payload, policy), (create) =>
            idempotentPost({
              required: false,
              successStatus: 201,
              resource: WebhookEndpointWithSecretResource,
              run: create,
            }),
          ),
        ),
      writeOptions,
    )
    .handle("listWebhookEndpoints", ({ urlParams }) =>
      forPartner((context) => listWebhookEndpointResources(context, urlParams)),
    )
    .handle("getWebhookEndpoint", ({ path }) =>
      forPartner((context) => getWebhookEndpointResource(context, path.endpoint_id)),
    )
    .handle(
      "updateWebhookEndpoint",
      ({ path, payload }) =>
        Effect.flatMap(targetPolicy, (policy) =>
          forPartner((context) => updateWebhookEndpoint(context, path.endpoint_id, payload, policy)),
        ),
      writeOptions,
    )
    .handle(
      "deleteWebhookEndpoint",
      ({ path }) => forPartner((context) => removeWebhookEndpoint(context, path.endpoint_id)),
      writeOptions,
    )
    .handle(
      "rotateWebhookEndpointSecret",
      ({ path }) =>
        idempotentPost({
          required: false,
          successStatus: 200,
          resource: WebhookEndpointWithSecretResource,
          run: (context) => rotateWebhookEndpointSecret(context, path.endpoint_id),
        }),
      writeOptions,
    ),
)

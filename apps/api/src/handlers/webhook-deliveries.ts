import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { ReplayResultResource } from "@points/domain"
import { PointsApi } from "@points/http-api"
import { listWebhookDeliveries, replayWebhookDeliveries } from "@points/infrastructure"
import { forPartner } from "../http/answer.js"
import { idempotentPost } from "../http/idempotent-post.js"
import { writeOptions } from "../http/write-options.js"

/** An endpoint's deliveries, and replays to it. */
export const WebhookDeliveriesLive = HttpApiBuilder.group(PointsApi, "webhookDeliveries", (handlers) =>
  handlers
    .handle("listDeliveries", ({ path, urlParams }) =>
      forPartner((context) => listWebhookDeliveries(context, path.endpoint_id, urlParams)),
    )
    .handle(
      "replay",
      ({ path, payload }) =>
        idempotentPost({
          required: false,
          successStatus: 202,
          resource: ReplayResultResource,
          run: (context) => replayWebhookDeliveries(context, path.endpoint_id, payload),
        }),
      writeOptions,
    ),
)

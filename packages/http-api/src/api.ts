import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { ErrorAt } from "./api-error.js"
import { API_VERSION } from "./api-version.js"
import { errorCodesInDocument } from "./error-codes-in-document.js"
import { AdminGroup } from "./groups/admin.js"
import { EventsGroup } from "./groups/events.js"
import { HealthGroup } from "./groups/health.js"
import { OAuthGroup } from "./groups/oauth.js"
import { OrdersGroup } from "./groups/orders.js"
import { PointsGroup } from "./groups/points.js"
import { UsersGroup } from "./groups/users.js"
import { WebhookDeliveriesGroup } from "./groups/webhook-deliveries.js"
import { WebhookEndpointsGroup } from "./groups/webhook-endpoints.js"
import { operationsDescribed } from "./operation-docs.js"
import { responseHeadersInDocument } from "./response-headers-in-document.js"
import { schemaFailuresAsPublished } from "./schema-failures-in-document.js"
import { sharedSchemasReferenced } from "./shared-schemas-in-document.js"
import { statusesAsAnswered } from "./statuses-in-document.js"
import { webhooksInDocument } from "./webhooks-in-document.js"

export { API_VERSION } from "./api-version.js"

/**
 * The whole HTTP contract: the server implements it, the client SDK calls it, `/openapi.json` describes it.
 * Every error is the published `{ errors: [{ id, code, message }] }` body.
 */
export class PointsApi extends HttpApi.make("points")
  .add(OAuthGroup)
  .add(UsersGroup)
  .add(PointsGroup)
  .add(OrdersGroup)
  .add(WebhookDeliveriesGroup)
  .add(WebhookEndpointsGroup)
  .add(EventsGroup)
  .add(AdminGroup)
  .add(HealthGroup)
  .addError(ErrorAt[400])
  .addError(ErrorAt[401])
  .addError(ErrorAt[404])
  .addError(ErrorAt[413])
  .addError(ErrorAt[415])
  .addError(ErrorAt[429])
  .addError(ErrorAt[500])
  .addError(ErrorAt[503])
  .annotate(OpenApi.Title, "Points & Orders Platform API")
  .annotate(OpenApi.Version, API_VERSION)
  .annotate(OpenApi.Transform, (spec) =>
    webhooksInDocument(
      operationsDescribed(
        responseHeadersInDocument(
          errorCodesInDocument(statusesAsAnswered(sharedSchemasReferenced(schemaFailuresAsPublished(spec)))),
        ),
      ),
    ),
  )
  .annotate(
    OpenApi.Description,
    "Server-to-server rewards API: users, points and orders, with idempotent POSTs (Idempotency-Key), OAuth 2.0 client credentials and signed webhooks.",
  ) {}

import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import { PointsApi } from "@points/http-api"
import { Layer } from "effect"
import { AdminLive } from "./handlers/admin.js"
import { EventsLive } from "./handlers/events.js"
import { HealthLive } from "./handlers/health.js"
import { OAuthLive } from "./handlers/oauth.js"
import { OrdersLive } from "./handlers/orders.js"
import { PointsLive } from "./handlers/points.js"
import { UsersLive } from "./handlers/users.js"
import { WebhookDeliveriesLive } from "./handlers/webhook-deliveries.js"
import { WebhookEndpointsLive } from "./handlers/webhook-endpoints.js"
import {
  AdminAuthenticationLive,
  AuthenticationLive,
  BearerTokensLive,
  FailedAuthenticationsLive,
} from "./http/authentication.js"
import { DirectPointsWritesLive } from "./http/direct-points-writes.js"
import { ErrorMiddlewareLive } from "./http/error-middleware.js"
import { OAuthHttpLive } from "./http/oauth-http.js"
import { ReferenceDocsLive } from "./http/reference-docs.js"
import { serverMiddleware } from "./http/server-middleware.js"

/** Node's default limit of a request's head (16 KiB): no path parameter can be longer. */
const MAX_PATH_PARAMETER_LENGTH = 16_384

/** Every handler of the contract, with their authentication. */
const ApiLive = HttpApiBuilder.api(PointsApi).pipe(
  Layer.provide(
    Layer.mergeAll(
      UsersLive,
      PointsLive,
      OrdersLive,
      WebhookDeliveriesLive,
      WebhookEndpointsLive,
      EventsLive,
      OAuthLive,
      AdminLive,
      HealthLive,
    ),
  ),
  Layer.provide(Layer.mergeAll(AuthenticationLive, AdminAuthenticationLive)),
)

// The contract's handlers served by the HTTP platform (see HttpAppLive).
const PlatformAppLive = HttpApiBuilder.serve(serverMiddleware).pipe(
  // Paths are matched exactly as the contract spells them: the router's defaults also took `/API/users`,
  // `/api/users/` and `/api//users`, which the body checks (media type) and the key fingerprints did not.
  // An id longer than the router's default limit (100) named no route (NN1002) where a shorter one is an
  // unknown resource (LE0002): a parameter may be as long as Node lets a request line be.
  Layer.locally(HttpRouter.currentRouterConfig, {
    caseSensitive: true,
    ignoreTrailingSlash: false,
    ignoreDuplicateSlashes: false,
    maxParamLength: MAX_PATH_PARAMETER_LENGTH,
  }),
  Layer.provide(ReferenceDocsLive),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
  Layer.provide(ErrorMiddlewareLive),
  Layer.provide(OAuthHttpLive),
  Layer.provide(ApiLive),
)

/**
 * The HTTP application: the contract's handlers behind the error mapping, `/openapi.json` generated from the
 * contract and an interactive reference at `/docs`, all inside the request-id / size / media-type middleware
 * (and the OAuth endpoints' HTTP rules), with the direct write path of the points movements in front of it.
 * Needs an HttpServer and its Node server (apiServerLayer), the database, and the settings.
 */
export const HttpAppLive = DirectPointsWritesLive.pipe(
  Layer.provide(PlatformAppLive),
  // One cache for authentication, the handlers that revoke tokens, the server middleware (which checks a
  // request's token before it reads its body) and the direct write path; one count of failed
  // authentications for the bearer and admin tokens.
  Layer.provide(Layer.merge(BearerTokensLive, FailedAuthenticationsLive)),
)

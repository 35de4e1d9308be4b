import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import type { PartnerId } from "@points/domain"
import { Context } from "effect"
import { ErrorAt } from "./api-error.js"

/** The authenticated caller of a partner API request. */
export interface Principal {
  readonly partnerId: PartnerId
  readonly clientId: string
  readonly tokenId: string
}

/** The principal of the current request, provided by the Authentication middleware. */
export class CurrentPrincipal extends Context.Tag("@points/http-api/CurrentPrincipal")<
  CurrentPrincipal,
  Principal
>() {}

/** Bearer token authentication (RFC 6750) of every `/api` route except `/api/oauth/*`. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()(
  "@points/http-api/Authentication",
  {
    failure: ErrorAt[401],
    provides: CurrentPrincipal,
    security: { bearer: HttpApiSecurity.bearer },
  },
) {}

/** Bearer `ADMIN_TOKEN` authentication of the admin API. */
export class AdminAuthentication extends HttpApiMiddleware.Tag<AdminAuthentication>()(
  "@points/http-api/AdminAuthentication",
  { failure: ErrorAt[401], security: { adminToken: HttpApiSecurity.bearer } },
) {}

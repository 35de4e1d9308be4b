import * as HttpApi from "@effect/platform/HttpApi"
import { PointsApi, RequiredIdempotencyKeyHeader, routedPath } from "@points/http-api"
import { Option } from "effect"

/** A route that takes a body: its method, its path template and pattern, and the media types it accepts. */
export interface BodyRoute {
  readonly method: string
  readonly template: string
  readonly path: RegExp
  readonly mediaTypes: ReadonlyArray<string>
  /** Whether its Idempotency-Key is required (IK1003 without it), as the contract documents the header. */
  readonly keyRequired: boolean
}

const FORM = "application/x-www-form-urlencoded"

// Read off the contract, so a new endpoint with a payload is checked the day it is added (a hand-kept list
// once missed three webhook routes). The token endpoints are declared with their RFC 6749 form body; DESIGN.md
// section 3 lets them take the same fields as JSON, which their handler parses too.
const bodyRoutes: ReadonlyArray<BodyRoute> = (() => {
  const routes: Array<BodyRoute> = []
  HttpApi.reflect(PointsApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, payloads }) => {
      if (endpoint.method === "GET" || payloads.size === 0) return
      const declared = [...payloads.keys()]
      const pattern = endpoint.path.replace(/:[^/]+/g, "[^/]+")
      routes.push({
        method: endpoint.method,
        template: endpoint.path,
        path: new RegExp(`^${pattern}$`),
        mediaTypes: declared.includes(FORM) ? [...declared, "application/json"] : declared,
        keyRequired: Option.exists(
          endpoint.headersSchema,
          (headers) => headers.ast === RequiredIdempotencyKeyHeader.ast,
        ),
      })
    },
  })
  return routes
})()

/** The route a request with a body goes to; undefined when it takes none (a body sent to it is ignored). */
export const bodyRouteOf = (method: string, path: string): BodyRoute | undefined => {
  // As the router reads it: `/api/%75sers` is POST /api/users.
  const routed = routedPath(path)
  return bodyRoutes.find((route) => route.method === method && route.path.test(routed))
}

// The example of README.md, kept here so that it compiles, and run by readme-example.test.ts; readme.test.ts
// checks that the README shows the region verbatim, so the documentation cannot drift from what works.
// #region contract
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, OpenApi } from "@effect/platform"
import { PointsApi } from "@points/http-api"
import { Effect } from "effect"

// The published OpenAPI 3.1 document, as the API serves it at /openapi.json.
export const document = OpenApi.fromApi(PointsApi)

// A client derived from the contract: a method per endpoint, in groups (oauth, users, points, orders,
// webhookEndpoints, webhookDeliveries, events, admin, health). It adds no token of its own, so the bearer
// goes on every request here. Retries, Idempotency-Keys and token renewal as the published guidance wants
// them are @points/client's work: use that SDK to call the API.
export const clientOf = (baseUrl: string, accessToken: string) =>
  HttpApiClient.make(PointsApi, {
    baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(accessToken)),
  }).pipe(Effect.provide(FetchHttpClient.layer))
// #endregion contract

import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Text } from "@points/domain"
import { Schema } from "effect"
import { ErrorAt } from "../api-error.js"
import { jsonBody } from "../body.js"

/** The access token object of Create Token (published section 2.1, plus RFC 6749 `expires_in`). */
export const TokenResource = Schema.Struct({
  token_id: Schema.String,
  token: Schema.String,
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_at: Schema.Int.annotations({ description: "When the token expires, in Unix seconds" }),
  expires_in: Schema.Int.annotations({ description: "Seconds from now until it expires (RFC 6749 5.1)" }),
}).pipe(Schema.annotations({ identifier: "AccessToken" }))
export type TokenResource = typeof TokenResource.Type

// RFC 6749 3.2: "Parameters sent without a value MUST be treated as if they were omitted from the request",
// as a form's `client_id=` or JSON's `"client_id": ""`: left out before the body is decoded, so that the
// schema and the handler see only the parameters that have a value.
const withoutEmptyParameters = (body: Readonly<Record<string, unknown>>) =>
  Object.fromEntries(Object.entries(body).filter(([, value]) => value !== ""))

/**
 * Create Token's request as a form (RFC 6749 4.4); a JSON object with the same fields is accepted too, and
 * the client may authenticate with HTTP Basic instead of the body fields (then it may send no body at all, or
 * a `client_id` naming the same client). A `scope` is refused (400 `invalid_scope`): tokens have none.
 */
// Decoded as every body is (jsonBody: the published wording, the value sent never formatted, so a JSON body
// nested thousands deep is a 400 and not a stack overflow), whether it came as a form or as JSON.
export const TokenRequestBody = jsonBody(
  Schema.Struct({
    grant_type: Schema.optional(Text),
    client_id: Schema.optional(Text),
    client_secret: Schema.optional(Text),
    scope: Schema.optional(
      Text.annotations({
        description:
          "Not supported: tokens carry no scope, so a non-empty one is refused (400 invalid_scope)",
      }),
    ),
  }).pipe(Schema.annotations({ identifier: "TokenRequest" })),
  withoutEmptyParameters,
).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))

/** Revoke Token's request (RFC 7009), client authenticated as for Create Token. */
export const RevokeRequestBody = jsonBody(
  Schema.Struct({
    token: Text,
    token_type_hint: Schema.optional(Text),
    client_id: Schema.optional(Text),
    client_secret: Schema.optional(Text),
  }).pipe(Schema.annotations({ identifier: "RevokeRequest" })),
  withoutEmptyParameters,
).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))

/**
 * An OpenAPI transform of Create Token: its body is optional, as a client authenticating with HTTP Basic may
 * send none (the platform documents every payload as required). Revoke Token's is not: it names the token.
 */
export const bodyOptionalInDocument = (operation: Record<string, unknown>): Record<string, unknown> =>
  typeof operation.requestBody === "object" && operation.requestBody !== null
    ? { ...operation, requestBody: { ...operation.requestBody, required: false } }
    : operation

/** OAuth 2.0 client credentials: tokens are issued and revoked here, without a bearer token. */
export class OAuthGroup extends HttpApiGroup.make("oauth")
  .add(
    HttpApiEndpoint.post("createToken", "/api/oauth/token")
      .setPayload(TokenRequestBody)
      .annotate(OpenApi.Transform, bodyOptionalInDocument)
      .addSuccess(TokenResource)
      .addError(ErrorAt[400])
      .addError(ErrorAt[401])
      .addError(ErrorAt[415])
      .addError(ErrorAt[429]),
  )
  .add(
    HttpApiEndpoint.post("revokeToken", "/api/oauth/revoke")
      .setPayload(RevokeRequestBody)
      .addSuccess(HttpApiSchema.Empty(200))
      .addError(ErrorAt[400])
      .addError(ErrorAt[401])
      .addError(ErrorAt[415])
      .addError(ErrorAt[429]),
  ) {}

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { ErrorAt } from "../api-error.js"

/** The access token object of Create Token (published section 2.1, plus RFC 6749 `expires_in`). */
export const TokenResource = Schema.Struct({
  token_id: Schema.String,
  token: Schema.String,
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_at: Schema.Int,
  expires_in: Schema.Int,
}).pipe(Schema.annotations({ identifier: "AccessToken" }))
export type TokenResource = typeof TokenResource.Type

/**
 * Create Token's request as a form (RFC 6749 4.4); a JSON object with the same fields is accepted too, and
 * the client may authenticate with HTTP Basic instead of the body fields (then it may send no body at all).
 */
export const TokenRequestBody = Schema.Struct({
  grant_type: Schema.optional(Schema.String),
  client_id: Schema.optional(Schema.String),
  client_secret: Schema.optional(Schema.String),
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }), Schema.annotations({ identifier: "TokenRequest" }))

/** Revoke Token's request (RFC 7009), client authenticated as for Create Token. */
export const RevokeRequestBody = Schema.Struct({
  token: Schema.String,
  token_type_hint: Schema.optional(Schema.String),
  client_id: Schema.optional(Schema.String),
  client_secret: Schema.optional(Schema.String),
}).pipe(
  HttpApiSchema.withEncoding({ kind: "UrlParams" }),
  Schema.annotations({ identifier: "RevokeRequest" }),
)

/** OAuth 2.0 client credentials: tokens are issued and revoked here, without a bearer token. */
export class OAuthGroup extends HttpApiGroup.make("oauth")
  .add(
    HttpApiEndpoint.post("createToken", "/api/oauth/token")
      .setPayload(TokenRequestBody)
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

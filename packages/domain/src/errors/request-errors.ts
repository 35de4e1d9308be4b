import { Schema } from "effect"
import { errorStatus } from "./http-status.js"

// Errors about the request itself (routing, authentication, shape, size, rate), raised before any business
// rule runs.

/** NN1002: no route matches the method and path. */
export class RouteNotFound extends Schema.TaggedError<RouteNotFound>()("RouteNotFound", {
  method: Schema.String,
  path: Schema.String,
}) {
  get code() {
    return "NN1002" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return "route not found"
  }
}

/** GH1001: missing or wrong client credentials on the token endpoints. */
export class InvalidClientCredentials extends Schema.TaggedError<InvalidClientCredentials>()(
  "InvalidClientCredentials",
  {},
) {
  get code() {
    return "GH1001" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return "invalid client credentials"
  }
}

/** Why a bearer token was refused; never shown to the caller, who only learns that it is invalid. */
export const InvalidTokenReason = Schema.Literal("missing", "malformed", "unknown", "expired", "revoked")
export type InvalidTokenReason = typeof InvalidTokenReason.Type

/** GH1003: missing, malformed, unknown, expired or revoked access token. */
export class InvalidToken extends Schema.TaggedError<InvalidToken>()("InvalidToken", {
  reason: InvalidTokenReason,
}) {
  get code() {
    return "GH1003" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return "invalid token"
  }
}

/** GH1006: one invalid parameter; `field` is its path as the client wrote it (`transaction.amount`). */
export class InvalidParams extends Schema.TaggedError<InvalidParams>()("InvalidParams", {
  field: Schema.String,
  problem: Schema.String,
}) {
  get code() {
    return "GH1006" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return this.field === "" ? `invalid params: ${this.problem}` : `${this.field} ${this.problem}`
  }
}

/** GH1007: a grant type other than `client_credentials`. */
export class UnsupportedGrantType extends Schema.TaggedError<UnsupportedGrantType>()("UnsupportedGrantType", {
  grantType: Schema.String,
}) {
  get code() {
    return "GH1007" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return "unsupported grant type: only client_credentials is supported"
  }
}

/** GH1008: a request body over the size limit. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  limitBytes: Schema.Int,
}) {
  get code() {
    return "GH1008" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return `payload too large: the limit is ${this.limitBytes} bytes`
  }
}

/** GH1009: the partner's (or client's) rate limit is reached; retry after `retryAfterSeconds`. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  retryAfterSeconds: Schema.Int,
}) {
  get code() {
    return "GH1009" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return `rate limit reached: retry after ${this.retryAfterSeconds} s`
  }
}

/** GH1010: a body in a media type the endpoint does not take. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  contentType: Schema.String,
  expected: Schema.String,
}) {
  get code() {
    return "GH1010" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return `unsupported media type: send ${this.expected}`
  }
}

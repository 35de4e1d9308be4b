import { Schema } from "effect"
import { errorStatus } from "./http-status.js"

/** SV5000: a failure of ours; the outcome is indeterminate and the message never reveals internals. */
export class UnexpectedError extends Schema.TaggedError<UnexpectedError>()("UnexpectedError", {}) {
  get code() {
    return "SV5000" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return "unexpected server error"
  }
}

/** SV5003: a dependency (the database) is out of reach; retry after `retryAfterSeconds`. */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  retryAfterSeconds: Schema.Int,
}) {
  get code() {
    return "SV5003" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return "service unavailable: retry later"
  }
}

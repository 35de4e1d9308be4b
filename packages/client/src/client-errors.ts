import { ApiError, ErrorEntry } from "@points/http-api"
import { Schema } from "effect"
import { type LastAttempt, noAttempt } from "./current-call.js"

/** The critical operations of the published retry guidance (section 4.2): a 500 there is never retried. */
export const CriticalOperation = Schema.Literal("createOrder", "addPoints", "subtractPoints")
export type CriticalOperation = typeof CriticalOperation.Type

/**
 * A critical operation (Create order, Add/Subtract points) answered 500, or answered outside the contract: the
 * transaction has most likely been created anyway, so it is not retried. Hold it as pending and reconcile:
 * read it with the matching GET by `referenceId` (`findOrders`, or `findTransactions` with the user's id,
 * taking the transaction of type `add` or `subtract`: an order's debit and refund carry the order's
 * reference id too), or retry later with the same `idempotencyKey` (within 24 hours) once support confirms
 * the fault is fixed; `requestId` names the attempt to support.
 */
export class PendingOutcome extends Schema.TaggedError<PendingOutcome>()("PendingOutcome", {
  operation: CriticalOperation,
  referenceId: Schema.String,
  idempotencyKey: Schema.String,
  /** The X-Request-Id of the attempt that got the answer. */
  requestId: Schema.NullOr(Schema.String),
  /** What the answer was: `answered 500`, or how it broke the contract. */
  problem: Schema.String,
  /** The error entries of a 500 in the published format (none otherwise). */
  errors: Schema.Array(ErrorEntry),
}) {
  override get message() {
    const lookup =
      this.operation === "createOrder"
        ? `findOrders({ reference_id: "${this.referenceId}" })`
        : `findTransactions({ reference_id: "${this.referenceId}", user_id }) and its ${this.operation === "addPoints" ? "add" : "subtract"}`
    const request = this.requestId === null ? "" : ` (request ${this.requestId})`
    return `${this.operation} ${this.problem}${request}: outcome unknown, hold it as pending; reconcile with ${lookup} or retry with Idempotency-Key "${this.idempotencyKey}" within 24 hours`
  }
}

// The URL of the token endpoint (Create token), not of the revocation beside it.
const TOKEN_ENDPOINT = /\/api\/oauth\/token(?:[?#]|$)/

/**
 * Every allowed attempt met a retriable failure (no response, 502/503/504, 429, a 500 outside the critical
 * operations): the outcome of a POST is unknown. Retry later with the same `idempotencyKey` (within 24 hours)
 * or reconcile with the matching GET by `reference_id`.
 */
export class RetriesExhausted extends Schema.TaggedError<RetriesExhausted>()("RetriesExhausted", {
  method: Schema.String,
  url: Schema.String,
  attempts: Schema.Int,
  /** The last status received, or null when the last attempt got no response. */
  lastStatus: Schema.NullOr(Schema.Int),
  lastFailure: Schema.String,
  /** The key every attempt carried (POST only). */
  idempotencyKey: Schema.NullOr(Schema.String),
  /** The X-Request-ID of the last attempt (the server's X-Request-Id when it answered). */
  requestId: Schema.NullOr(Schema.String),
}) {
  override get message() {
    const failed = `${this.method} ${this.url} failed ${this.attempts} times`
    const last = `last: ${this.lastFailure}`
    // The token endpoint's retries end a call only before its first attempt (after one, the call's own
    // RetriesExhausted says so): the call itself was never sent, and its key was never used.
    if (TOKEN_ENDPOINT.test(this.url)) {
      const key =
        this.idempotencyKey === null ? "" : `; retry it later with Idempotency-Key "${this.idempotencyKey}"`
      return `no access token (${failed}, ${last}): the call was not sent${key}`
    }
    const key = this.idempotencyKey === null ? "" : ` (Idempotency-Key "${this.idempotencyKey}")`
    return `${failed}${key}, ${last}`
  }
}

/** The request was refused by the client before anything was sent: its input breaks the contract. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  operation: Schema.String,
  problem: Schema.String,
}) {
  override get message() {
    return `${this.operation}: invalid input: ${this.problem}`
  }
}

/**
 * The server's answer does not follow the contract (an undeclared status, a body that does not decode), or
 * the request could not be built: a version skew or a bug, not something a retry fixes.
 */
export class ProtocolError extends Schema.TaggedError<ProtocolError>()("ProtocolError", {
  status: Schema.NullOr(Schema.Int),
  problem: Schema.String,
  /** A POST's Idempotency-Key: the write may have happened; retry with it or reconcile. */
  idempotencyKey: Schema.optional(Schema.String),
  /** The X-Request-Id of the attempt that got the answer. */
  requestId: Schema.optional(Schema.String),
}) {
  override get message() {
    return this.status === null ? this.problem : `${this.problem} (status ${this.status})`
  }
}

/**
 * The server's refusal as the client received it: the contract's `ApiError` (`status`, the published
 * `errors[]`; `_tag` "ApiError", and `instanceof ApiError` holds) with what the answer said beside its body.
 * `requestId` names it to support (the server's X-Request-Id; null when no attempt was answered, e.g. the
 * token endpoint refused the credential first: then `error` is `invalid_client`); `idempotencyKey` is the
 * key a POST carried; `replayed` says the answer is one the server recorded earlier under that key
 * (`Idempotent-Replayed: true`), so running the same call again replays it again for 24 hours: send a new
 * key once the cause is fixed; `retryAfterSeconds` is the wait a `Retry-After` asked for (a 429 longer than
 * `maxRetryAfter`, say).
 */
export class AnsweredApiError extends ApiError {
  readonly requestId: string | null
  readonly idempotencyKey: string | null
  readonly replayed: boolean
  readonly retryAfterSeconds: number | null

  /**
   * The refusal `error` as answered to `attempt` of a call with `idempotencyKey`. Without them (a test double,
   * `AnsweredApiError.make({ status, errors })`), no attempt is named: `requestId` null, not `replayed`.
   */
  constructor(
    error: Pick<ApiError, "status" | "errors" | "error" | "error_description">,
    attempt?: LastAttempt | boolean,
    idempotencyKey: string | null = null,
  ) {
    // Schema's own constructions (make, decode) pass a validation flag second: no attempt then.
    const answered = typeof attempt === "object" ? attempt : noAttempt
    super(
      {
        status: error.status,
        errors: error.errors,
        ...(error.error === undefined ? {} : { error: error.error }),
        ...(error.error_description === undefined ? {} : { error_description: error.error_description }),
      },
      true,
    )
    this.requestId = answered.requestId
    this.idempotencyKey = idempotencyKey
    this.replayed = answered.replayed
    this.retryAfterSeconds = answered.retryAfterSeconds
  }

  override get message() {
    const request = this.requestId === null ? "" : ` (request ${this.requestId})`
    return `${super.message}${request}`
  }
}

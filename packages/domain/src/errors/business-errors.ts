import { Schema } from "effect"
import { OrderStatus } from "../order/state.js"
import { errorStatus } from "./http-status.js"

// Errors raised by the business rules of the deciders (LE codes). Each names what it is about, so that the
// message a partner reads explains the refusal without a support call.

/** The kinds of resource a partner can address; used to name what was not found or is closed. */
export const ResourceKind = Schema.Literal(
  "user",
  "points account",
  "transaction",
  "order",
  "webhook endpoint",
  "event",
  "partner",
  "client",
)
export type ResourceKind = typeof ResourceKind.Type

/** LE0001: a write about a user whose account is still being processed. */
export class UserBeingProcessed extends Schema.TaggedError<UserBeingProcessed>()("UserBeingProcessed", {
  userId: Schema.String,
}) {
  get code() {
    return "LE0001" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return "user is already being processed"
  }
}

/** LE0002: the resource does not exist for this partner (also when it belongs to another partner). */
export class ResourceNotFound extends Schema.TaggedError<ResourceNotFound>()("ResourceNotFound", {
  resource: ResourceKind,
  id: Schema.String,
}) {
  get code() {
    return "LE0002" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return `${this.resource} not found`
  }
}

/** LE0004: the resource is closed (a closed user, a revoked credential) and takes no more writes. */
export class AlreadyClosed extends Schema.TaggedError<AlreadyClosed>()("AlreadyClosed", {
  resource: ResourceKind,
  id: Schema.String,
}) {
  get code() {
    return "LE0004" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return `${this.resource} is already closed`
  }
}

/** The kinds of record whose `reference_id` is unique per partner. */
export const ReferenceKind = Schema.Literal("transaction", "order")
export type ReferenceKind = typeof ReferenceKind.Type

/** LE0006: a second record of the same kind with the same `reference_id`; read the first with the GET. */
export class DuplicateReferenceId extends Schema.TaggedError<DuplicateReferenceId>()("DuplicateReferenceId", {
  kind: ReferenceKind,
  referenceId: Schema.String,
}) {
  get code() {
    return "LE0006" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    const article = this.kind === "order" ? "an" : "a"
    return `duplicate reference_id: ${article} ${this.kind} with this reference_id already exists`
  }
}

/**
 * LE0007: the partner has as many of a kind of resource as it may (e.g. webhook endpoints); delete one to make
 * room. Nothing was created.
 */
export class LimitReached extends Schema.TaggedError<LimitReached>()("LimitReached", {
  resource: Schema.String,
  limit: Schema.Int,
}) {
  get code() {
    return "LE0007" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return `limit reached: a partner has at most ${this.limit} ${this.resource}`
  }
}

/**
 * LE0008: a replay to a webhook endpoint that is disabled (by the partner, or by the platform after a 410 or 5
 * days of failures). Its attempts would end at once, unsent; enable the endpoint first. Nothing was scheduled.
 */
export class EndpointDisabled extends Schema.TaggedError<EndpointDisabled>()("EndpointDisabled", {
  endpointId: Schema.String,
}) {
  get code() {
    return "LE0008" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return 'webhook endpoint is disabled: enable it with PATCH {"enabled": true} before replaying'
  }
}

/** LE1001 has two published meanings; the reason says which, and with it the status. */
export const PointsAccountConflictReason = Schema.Literal("AccountAlreadyOpen", "UserIdNotAString")
export type PointsAccountConflictReason = typeof PointsAccountConflictReason.Type

/**
 * LE1001: a second points account for a user (409, unsupported), or a points request whose
 * `transaction.user_id` is not a string (400), both as published.
 */
export class PointsAccountConflict extends Schema.TaggedError<PointsAccountConflict>()(
  "PointsAccountConflict",
  {
    reason: PointsAccountConflictReason,
  },
) {
  get code() {
    return "LE1001" as const
  }
  get status() {
    return this.reason === "UserIdNotAString" ? (400 as const) : errorStatus[this.code]
  }
  override get message() {
    return this.reason === "UserIdNotAString"
      ? "transaction.user_id must be a string"
      : "multiple points accounts found for the given user id (unsupported)"
  }
}

/** LE2001: a debit (subtract, order) for a user without an open points account. */
export class NoPointsAccount extends Schema.TaggedError<NoPointsAccount>()("NoPointsAccount", {
  userId: Schema.String,
}) {
  get code() {
    return "LE2001" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return "no account to write off for the user id"
  }
}

/** LE2002: a debit larger than the balance; balances never go below zero. */
export class InsufficientPoints extends Schema.TaggedError<InsufficientPoints>()("InsufficientPoints", {
  balance: Schema.Int,
  requested: Schema.Int,
}) {
  get code() {
    return "LE2002" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return `insufficient points balance: ${this.requested} requested, ${this.balance} available`
  }
}

/** LE3001: an order status change that the order's lifecycle does not allow. */
export class IllegalOrderTransition extends Schema.TaggedError<IllegalOrderTransition>()(
  "IllegalOrderTransition",
  {
    orderId: Schema.String,
    // Typed as the lifecycle's statuses, so that a caller can match on them.
    from: OrderStatus,
    to: OrderStatus,
  },
) {
  get code() {
    return "LE3001" as const
  }
  get status() {
    return errorStatus[this.code]
  }
  override get message() {
    return `order cannot change from ${this.from} to ${this.to}`
  }
}

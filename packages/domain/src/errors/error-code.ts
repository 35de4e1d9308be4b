import { Schema } from "effect"
import type {
  AlreadyClosed,
  DuplicateReferenceId,
  EndpointDisabled,
  IllegalOrderTransition,
  InsufficientPoints,
  LimitReached,
  NoPointsAccount,
  PointsAccountConflict,
  ResourceNotFound,
  UserBeingProcessed,
} from "./business-errors.js"
import type {
  IdempotencyKeyInProgress,
  IdempotencyKeyRequired,
  IdempotencyKeyReused,
} from "./idempotency-errors.js"
import type {
  InvalidClientCredentials,
  InvalidParams,
  InvalidToken,
  PayloadTooLarge,
  RateLimited,
  RouteNotFound,
  UnsupportedGrantType,
  UnsupportedMediaType,
} from "./request-errors.js"
import type { ServiceUnavailable, UnexpectedError } from "./service-errors.js"

/** Errors the business rules raise (the LE codes). */
export type BusinessError =
  | UserBeingProcessed
  | ResourceNotFound
  | AlreadyClosed
  | DuplicateReferenceId
  | LimitReached
  | EndpointDisabled
  | PointsAccountConflict
  | NoPointsAccount
  | InsufficientPoints
  | IllegalOrderTransition

/**
 * DESIGN.md's name for what a decider refuses with (`decide(command, state) -> Effect<events, DomainError>`):
 * the business errors, the idempotency key's IK1001 and IK1002, and a webhook target's GH1006. Every decider's
 * error type is one of these (checked in the domain's tests), so one handler of DomainError covers them all.
 */
export type DomainError = BusinessError | IdempotencyKeyReused | IdempotencyKeyInProgress | InvalidParams

/** Errors of the idempotency protocol. */
export type IdempotencyError = IdempotencyKeyReused | IdempotencyKeyInProgress | IdempotencyKeyRequired

/** Errors about the request, found before any business rule runs. */
export type RequestError =
  | RouteNotFound
  | InvalidClientCredentials
  | InvalidToken
  | InvalidParams
  | UnsupportedGrantType
  | PayloadTooLarge
  | RateLimited
  | UnsupportedMediaType

/** Every error the platform answers with; each carries its `code`, `status` and `message`. */
export type PlatformError =
  | BusinessError
  | IdempotencyError
  | RequestError
  | UnexpectedError
  | ServiceUnavailable

/** Every error code of DESIGN.md section 5, derived from the error classes. */
export type ErrorCode = PlatformError["code"]

/** The error codes as a schema, e.g. for the `code` field of the published error body. */
export const ErrorCode = Schema.Literal(
  "NN1002",
  "GH1001",
  "GH1003",
  "GH1006",
  "GH1007",
  "GH1008",
  "GH1009",
  "GH1010",
  "LE0001",
  "LE0002",
  "LE0004",
  "LE0006",
  "LE0007",
  "LE0008",
  "LE1001",
  "LE2001",
  "LE2002",
  "LE3001",
  "IK1001",
  "IK1002",
  "IK1003",
  "SV5000",
  "SV5003",
) satisfies Schema.Schema<ErrorCode>

// The schema above and the classes must list the same codes; this fails to compile when they drift apart.
type SameCodes<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const codeListIsExact: SameCodes<ErrorCode, typeof ErrorCode.Type> = true
void codeListIsExact

import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Schema } from "effect"
import {
  AlreadyClosed,
  type ClientCredential,
  type DomainError,
  DuplicateReferenceId,
  EndpointDisabled,
  ErrorCode,
  type ErrorOf,
  errorStatus,
  type IdempotencyKey,
  IdempotencyKeyInProgress,
  IdempotencyKeyRequired,
  IdempotencyKeyReused,
  IllegalOrderTransition,
  InsufficientPoints,
  InvalidClientCredentials,
  InvalidParams,
  InvalidToken,
  type Ledger,
  LimitReached,
  NoPointsAccount,
  type Order,
  type Partner,
  PayloadTooLarge,
  type PlatformError,
  PointsAccountConflict,
  RateLimited,
  type Reference,
  ResourceNotFound,
  RouteNotFound,
  ServiceUnavailable,
  UnexpectedError,
  UnsupportedGrantType,
  UnsupportedMediaType,
  type User,
  UserBeingProcessed,
  type WebhookEndpoint,
} from "../src/index.js"

// One instance of every error class, with the message a partner reads.
const examples: ReadonlyArray<readonly [PlatformError, string]> = [
  [new RouteNotFound({ method: "GET", path: "/api/nope" }), "route not found"],
  [new InvalidClientCredentials(), "invalid client credentials"],
  [new InvalidToken({ reason: "expired" }), "invalid token"],
  [new InvalidParams({ field: "email", problem: "must be a string" }), "email must be a string"],
  [
    new UnsupportedGrantType({ grantType: "password" }),
    "unsupported grant type: only client_credentials is supported",
  ],
  [new PayloadTooLarge({ limitBytes: 1_048_576 }), "payload too large: the limit is 1048576 bytes"],
  [new RateLimited({ retryAfterSeconds: 2 }), "rate limit reached: retry after 2 s"],
  [
    new UnsupportedMediaType({ contentType: "text/plain", expected: "application/json" }),
    "unsupported media type: send application/json",
  ],
  [new UserBeingProcessed({ userId: "u" }), "user is already being processed"],
  [new ResourceNotFound({ resource: "order", id: "o" }), "order not found"],
  [new AlreadyClosed({ resource: "user", id: "u" }), "user is already closed"],
  [
    new DuplicateReferenceId({ kind: "transaction", referenceId: "r" }),
    "duplicate reference_id: a transaction with this reference_id already exists",
  ],
  [
    new LimitReached({ resource: "webhook endpoints", limit: 20 }),
    "limit reached: a partner has at most 20 webhook endpoints",
  ],
  [
    new EndpointDisabled({ endpointId: "e" }),
    'webhook endpoint is disabled: enable it with PATCH {"enabled": true} before replaying',
  ],

  [
    new PointsAccountConflict({ reason: "AccountAlreadyOpen" }),
    "multiple points accounts found for the given user id (unsupported)",
  ],
  [new NoPointsAccount({ userId: "u" }), "no account to write off for the user id"],
  [
    new InsufficientPoints({ balance: 5, requested: 9 }),
    "insufficient points balance: 9 requested, 5 available",
  ],
  [
    new IllegalOrderTransition({ orderId: "o", from: "completed", to: "cancelled" }),
    "order cannot change from completed to cancelled",
  ],
  [
    new IdempotencyKeyReused({ differs: ["path", "body"] }),
    "Idempotency-Key was already used with a different request (path and body differ)",
  ],
  [new IdempotencyKeyInProgress(), "a request with this Idempotency-Key is in progress"],
  [new IdempotencyKeyRequired(), "Idempotency-Key header is required"],
  [new UnexpectedError(), "unexpected server error"],
  [new ServiceUnavailable({ retryAfterSeconds: 1 }), "service unavailable: retry later"],
]

describe("Platform errors", () => {
  it("give every code of DESIGN.md section 5 exactly one error class", () => {
    const codes = examples.map(([error]) => error.code)
    expect(new Set(codes).size).toBe(codes.length)
    expect([...codes].sort()).toEqual([...ErrorCode.literals].sort())
    expect(Object.keys(errorStatus).sort()).toEqual([...ErrorCode.literals].sort())
  })

  it("include every refusal of every decider in DomainError, so that one handler of it covers them all", () => {
    type Refusal =
      | ErrorOf<typeof Ledger.decider>
      | ErrorOf<typeof User.decider>
      | ErrorOf<typeof Order.decider>
      | ErrorOf<typeof Reference.decider>
      | ErrorOf<typeof Partner.decider>
      | ErrorOf<typeof ClientCredential.decider>
      | ErrorOf<typeof IdempotencyKey.decider>
      | ErrorOf<typeof WebhookEndpoint.decider>
    // Checked by the type checker (npm test runs it before the tests); at run time, the codes they carry.
    expectTypeOf<Refusal>().toExtend<DomainError>()
    const codes = [
      new InvalidParams({ field: "url", problem: "must be https" }),
      new IdempotencyKeyReused({ differs: ["body"] }),
    ].map((error: DomainError) => error.code)
    expect(codes).toEqual(["GH1006", "IK1001"])
  })

  it("carry their code, the table's status, and their published message", () => {
    for (const [error, message] of examples) {
      expect(error.message).toBe(message)
      expect(error.status).toBe(errorStatus[error.code])
    }
    expect(errorStatus).toMatchObject({
      NN1002: 404,
      GH1003: 401,
      GH1006: 400,
      LE0001: 409,
      LE2001: 422,
      SV5003: 503,
    })
  })

  it("name the kind of a duplicate reference_id with its article", () => {
    expect(new DuplicateReferenceId({ kind: "order", referenceId: "r" }).message).toBe(
      "duplicate reference_id: an order with this reference_id already exists",
    )
  })

  it("give LE1001 its two published statuses", () => {
    const malformed = new PointsAccountConflict({ reason: "UserIdNotAString" })
    expect([malformed.status, malformed.message]).toEqual([400, "transaction.user_id must be a string"])
    expect(new PointsAccountConflict({ reason: "AccountAlreadyOpen" }).status).toBe(409)
  })

  it("are data: they encode to their fields and decode back", () => {
    const error = new InsufficientPoints({ balance: 5, requested: 9 })
    const encoded = Schema.encodeSync(InsufficientPoints)(error)
    expect(encoded).toEqual({ _tag: "InsufficientPoints", balance: 5, requested: 9 })
    expect(Schema.decodeSync(InsufficientPoints)(encoded)).toEqual(error)
  })

  it("carry LE3001's statuses as the order lifecycle's, refusing any other when decoded", () => {
    const illegal = { _tag: "IllegalOrderTransition", orderId: "o", from: "completed", to: "cancelled" }
    expect(Schema.decodeUnknownSync(IllegalOrderTransition)(illegal).from).toBe("completed")
    expect(Schema.is(IllegalOrderTransition)(Schema.decodeUnknownSync(IllegalOrderTransition)(illegal))).toBe(
      true,
    )
    expect(() => Schema.decodeUnknownSync(IllegalOrderTransition)({ ...illegal, to: "shipped" })).toThrow()
  })
})

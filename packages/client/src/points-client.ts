import { HttpApiClient, HttpClient, HttpClientError } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import {
  ApiError,
  CreateOrderBody,
  CreateUserBody,
  PointsApi,
  PointsMovementBody,
  UpdateUserBody,
} from "@points/http-api"
import { Effect, Option, ParseResult, Redacted, Schema } from "effect"
import { makeAccessTokens } from "./access-tokens.js"
import {
  type CriticalOperation,
  InvalidRequest,
  PendingOutcome,
  ProtocolError,
  type RetriesExhausted,
} from "./client-errors.js"
import type {
  CreateOrderInput,
  CreateUserInput,
  FindOrdersQuery,
  FindTransactionsQuery,
  FindUsersQuery,
  Order,
  Page,
  PointsAccount,
  PointsMovementInput,
  Transaction,
  UpdateUserInput,
  User,
  WriteOptions,
} from "./contract-types.js"
import { currentCall } from "./current-call.js"
import { newIdempotencyKey, resilientHttpClient } from "./resilient-http-client.js"
import { type RetryPolicy, resolveRetryPolicy } from "./retry-policy.js"

/** How to reach the API and who the client is. */
export interface PointsClientOptions {
  /** The server's base address, e.g. `https://points.example.com`. */
  readonly baseUrl: string | URL
  readonly clientId: string
  /** Keep it out of code: read it from the environment or a secret manager. */
  readonly clientSecret: string | Redacted.Redacted
  /** Overrides of the retry policy (defaults: at most 15 retries, backoff 0.5 s doubling to 60 s). */
  readonly retry?: Partial<RetryPolicy>
  /** How long before its expiry a token is renewed (seconds, default 60; at most half its lifetime). */
  readonly renewBeforeSeconds?: number
}

/** Failures of a read: an error answer, retries that ran out, or an answer outside the contract. */
export type ReadError = ApiError | RetriesExhausted | ProtocolError
/** Failures of a write: those of a read, or input the client refused before sending. */
export type WriteError = ReadError | InvalidRequest
/** Failures of a critical write (Create order, Add/Subtract points): also a 500 whose outcome is pending. */
export type CriticalWriteError = WriteError | PendingOutcome

/** The typed client of the Points & Orders API; every method is one operation, retried as section 4.2 says. */
export interface PointsClient {
  readonly createUser: (input: CreateUserInput, options?: WriteOptions) => Effect.Effect<User, WriteError>
  readonly getUser: (userId: string) => Effect.Effect<User, ReadError>
  readonly findUsers: (query?: FindUsersQuery) => Effect.Effect<Page<User>, ReadError>
  readonly updateUser: (userId: string, input: UpdateUserInput) => Effect.Effect<User, WriteError>
  /** Close user (DELETE): a repeat, including a retry after a lost answer, is 409 LE0004. */
  readonly closeUser: (userId: string) => Effect.Effect<User, ReadError>
  readonly openPointsAccount: (
    userId: string,
    options?: WriteOptions,
  ) => Effect.Effect<PointsAccount, ReadError>
  readonly getPointsAccount: (userId: string) => Effect.Effect<PointsAccount, ReadError>
  readonly addPoints: (
    input: PointsMovementInput,
    options?: WriteOptions,
  ) => Effect.Effect<Transaction, CriticalWriteError>
  readonly subtractPoints: (
    input: PointsMovementInput,
    options?: WriteOptions,
  ) => Effect.Effect<Transaction, CriticalWriteError>
  readonly getTransaction: (transactionId: string) => Effect.Effect<Transaction, ReadError>
  readonly findTransactions: (query?: FindTransactionsQuery) => Effect.Effect<Page<Transaction>, ReadError>
  readonly createOrder: (
    input: CreateOrderInput,
    options?: WriteOptions,
  ) => Effect.Effect<Order, CriticalWriteError>
  readonly getOrder: (orderId: string) => Effect.Effect<Order, ReadError>
  readonly findOrders: (query?: FindOrdersQuery) => Effect.Effect<Page<Order>, ReadError>
  readonly cancelOrder: (orderId: string, options?: WriteOptions) => Effect.Effect<Order, ReadError>
}

const DEFAULT_RENEW_BEFORE_SECONDS = 60

// Transport and decoding failures that are neither an error answer nor a retry outcome. HttpApiDecodeError
// is the platform's default 400 body, which this server never sends (its 400 is the published body).
type ProtocolFailure = HttpClientError.HttpClientError | ParseResult.ParseError | HttpApiDecodeError

const isProtocolFailure = (error: unknown): error is ProtocolFailure =>
  HttpClientError.isHttpClientError(error) ||
  ParseResult.isParseError(error) ||
  error instanceof HttpApiDecodeError

const protocolErrorOf = (error: ProtocolFailure) => {
  switch (error._tag) {
    case "ResponseError":
      return new ProtocolError({
        status: error.response.status,
        problem: `unexpected answer: ${error.message}`,
      })
    case "RequestError":
      return new ProtocolError({ status: null, problem: error.message })
    case "HttpApiDecodeError":
      return new ProtocolError({ status: 400, problem: `unexpected answer: ${error.message}` })
    case "ParseError":
      return new ProtocolError({
        status: null,
        problem: `the answer does not follow the contract: ${error.message}`,
      })
  }
}

/** Maps transport and decoding failures to ProtocolError; error answers and RetriesExhausted stay as they are. */
const settled = <A, E>(
  effect: Effect.Effect<A, E>,
): Effect.Effect<A, Exclude<E, ProtocolFailure> | ProtocolError> =>
  Effect.mapError(effect, (error) =>
    // The guard removes exactly the excluded members, which TypeScript cannot see through a type parameter.
    isProtocolFailure(error) ? protocolErrorOf(error) : (error as Exclude<E, ProtocolFailure>),
  )

// Input is checked with the contract's own schema before anything is sent.
const checked = <A, I>(schema: Schema.Schema<A, I>, operation: string, input: I) =>
  Effect.mapError(
    Schema.decodeUnknown(schema, { errors: "all" })(input),
    (error) => new InvalidRequest({ operation, problem: ParseResult.TreeFormatter.formatErrorSync(error) }),
  )

/** Runs one POST with its Idempotency-Key (the caller's or a fresh one) for every attempt. */
const post = <A, E>(send: Effect.Effect<A, E>, idempotencyKey: string, critical: boolean) =>
  Effect.locally(settled(send), currentCall, Option.some({ idempotencyKey, critical }))

/** A critical POST: a 500 is not retried and becomes PendingOutcome, to reconcile by `referenceId`. */
const criticalPost = <A, E>(
  send: Effect.Effect<A, E>,
  operation: CriticalOperation,
  referenceId: string,
  options: WriteOptions | undefined,
) => {
  const idempotencyKey = options?.idempotencyKey ?? newIdempotencyKey()
  return Effect.mapError(post(send, idempotencyKey, true), (error) =>
    error instanceof ApiError && error.status === 500
      ? new PendingOutcome({ operation, referenceId, idempotencyKey, errors: error.errors })
      : error,
  )
}

// The contract documents each POST's Idempotency-Key header; the resilient HTTP client sets it (the same key on
// every retry of a call), so the call itself passes none.
const keyFromCall = {}

/**
 * Makes a client of the API at `baseUrl` for one client credential: it obtains an access token on first use
 * and renews it before it expires, sends `Authorization: Bearer` and an Idempotency-Key on every POST, and
 * retries as the published guidance says. Needs an `HttpClient` (e.g. `FetchHttpClient.layer`).
 */
export const makePointsClient = (options: PointsClientOptions) =>
  Effect.gen(function* () {
    const policy = yield* Effect.sync(() => resolveRetryPolicy(options.retry))
    const renewBeforeSeconds = options.renewBeforeSeconds ?? DEFAULT_RENEW_BEFORE_SECONDS
    if (!(Number.isFinite(renewBeforeSeconds) && renewBeforeSeconds >= 0)) {
      return yield* Effect.dieMessage("renewBeforeSeconds must be a non-negative number")
    }
    const base = yield* HttpClient.HttpClient
    const secret =
      typeof options.clientSecret === "string" ? Redacted.make(options.clientSecret) : options.clientSecret
    const oauth = yield* HttpApiClient.group(PointsApi, {
      group: "oauth",
      httpClient: resilientHttpClient<never>(base, policy, Option.none()),
      baseUrl: options.baseUrl,
    })
    const fetchToken = oauth
      .createToken({
        payload: {
          grant_type: "client_credentials",
          client_id: options.clientId,
          client_secret: Redacted.value(secret),
        },
      })
      .pipe(Effect.locally(currentCall, Option.none()))
    const tokens = yield* makeAccessTokens(fetchToken, renewBeforeSeconds * 1000)
    const api = yield* HttpApiClient.makeWith(PointsApi, {
      httpClient: resilientHttpClient(base, policy, Option.some(tokens)),
      baseUrl: options.baseUrl,
    })

    const client: PointsClient = {
      createUser: (input, writeOptions) =>
        Effect.flatMap(checked(CreateUserBody, "createUser", input), (payload) =>
          post(
            api.users.createUser({ headers: keyFromCall, payload }),
            writeOptions?.idempotencyKey ?? newIdempotencyKey(),
            false,
          ),
        ),
      getUser: (userId) => settled(api.users.getUser({ path: { user_id: userId } })),
      findUsers: (query = {}) => settled(api.users.findUsers({ urlParams: query })),
      updateUser: (userId, input) =>
        Effect.flatMap(checked(UpdateUserBody, "updateUser", input), (payload) =>
          settled(api.users.updateUser({ path: { user_id: userId }, payload })),
        ),
      closeUser: (userId) => settled(api.users.closeUser({ path: { user_id: userId } })),
      openPointsAccount: (userId, writeOptions) =>
        post(
          api.users.openPointsAccount({ headers: keyFromCall, path: { user_id: userId } }),
          writeOptions?.idempotencyKey ?? newIdempotencyKey(),
          false,
        ),
      getPointsAccount: (userId) => settled(api.users.getPointsAccount({ path: { user_id: userId } })),
      addPoints: (input, writeOptions) => {
        const send = Effect.flatMap(
          checked(PointsMovementBody, "addPoints", { transaction: input }),
          (payload) => api.points.addPoints({ headers: keyFromCall, payload }),
        )
        return criticalPost(send, "addPoints", input.reference_id, writeOptions)
      },
      subtractPoints: (input, writeOptions) => {
        const send = Effect.flatMap(
          checked(PointsMovementBody, "subtractPoints", { transaction: input }),
          (payload) => api.points.subtractPoints({ headers: keyFromCall, payload }),
        )
        return criticalPost(send, "subtractPoints", input.reference_id, writeOptions)
      },
      getTransaction: (transactionId) =>
        settled(api.points.getTransaction({ path: { transaction_id: transactionId } })),
      findTransactions: (query = {}) => settled(api.points.findTransactions({ urlParams: query })),
      createOrder: (input, writeOptions) => {
        const send = Effect.flatMap(checked(CreateOrderBody, "createOrder", input), (payload) =>
          api.orders.createOrder({ headers: keyFromCall, payload }),
        )
        return criticalPost(send, "createOrder", input.reference_id, writeOptions)
      },
      getOrder: (orderId) => settled(api.orders.getOrder({ path: { order_id: orderId } })),
      findOrders: (query = {}) => settled(api.orders.findOrders({ urlParams: query })),
      cancelOrder: (orderId, writeOptions) =>
        post(
          api.orders.cancelOrder({ headers: keyFromCall, path: { order_id: orderId } }),
          writeOptions?.idempotencyKey ?? newIdempotencyKey(),
          false,
        ),
    }
    return client
  })

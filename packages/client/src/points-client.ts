import * as HttpApiClient from "@effect/platform/HttpApiClient"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import { IdempotencyKey, Text } from "@points/domain"
import {
  ApiError,
  CreateOrderBody,
  CreateUserBody,
  CreateWebhookEndpointBody,
  FindOrdersQuery as FindOrdersQuerySchema,
  FindTransactionsQuery as FindTransactionsQuerySchema,
  FindUsersQuery as FindUsersQuerySchema,
  ListEventsQuery as ListEventsQuerySchema,
  PointsApi,
  PointsMovementBody,
  problemsOf,
  ReplayBody,
  UpdateUserBody,
  UpdateWebhookEndpointBody,
  WebhookDeliveriesQuery,
  WebhookEndpointsQuery,
} from "@points/http-api"
import { Effect, Either, Option, ParseResult, Redacted, Schema } from "effect"
import { makeAccessTokens } from "./access-tokens.js"
import {
  AnsweredApiError,
  type CriticalOperation,
  InvalidRequest,
  PendingOutcome,
  ProtocolError,
  RetriesExhausted,
} from "./client-errors.js"
import type {
  CreateOrderInput,
  CreateUserInput,
  CreateWebhookEndpointInput,
  FindOrdersQuery,
  FindTransactionsQuery,
  FindUsersQuery,
  ListEventsQuery,
  Order,
  Page,
  PageQuery,
  PointsAccount,
  PointsMovementInput,
  PublicEvent,
  ReplayInput,
  ReplayResult,
  Transaction,
  UpdateUserInput,
  UpdateWebhookEndpointInput,
  User,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WriteOptions,
} from "./contract-types.js"
import { type CallSettings, currentCall, type LastAttempt, noAttempt } from "./current-call.js"
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
  /**
   * Allow a plain `http://` base address on a host other than this machine's loopback (tests, local
   * development). Without it only `https://` is accepted there: the client secret and tokens travel in
   * every request (published 5.3 requires HTTPS).
   */
  readonly allowInsecureHttp?: boolean
}

const isLoopback = (hostname: string) =>
  hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname)

/** Why a base address cannot be used, or undefined when it can. */
const baseUrlProblem = (baseUrl: string | URL, allowInsecureHttp: boolean): string | undefined => {
  const url = URL.canParse(String(baseUrl)) ? new URL(String(baseUrl)) : undefined
  if (url === undefined) return `baseUrl ${String(baseUrl)} is not an absolute URL`
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && (allowInsecureHttp || isLoopback(url.hostname))) return undefined
  return `baseUrl must be https:// (plain http only to this machine, or with allowInsecureHttp), not ${url.protocol}//${url.host}`
}

/**
 * Failures of a call: an error answer, retries that ran out, an answer outside the contract, or input the
 * client refused before sending anything (a body, query or Idempotency-Key that breaks the contract, an id
 * that cannot be sent as a path segment).
 */
export type ReadError = AnsweredApiError | RetriesExhausted | ProtocolError | InvalidRequest
/** Failures of a write: those of a read. */
export type WriteError = ReadError
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
  ) => Effect.Effect<PointsAccount, WriteError>
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
  readonly cancelOrder: (orderId: string, options?: WriteOptions) => Effect.Effect<Order, WriteError>
  /** The partner's public events, oldest first: what webhooks deliver, to audit or to catch up. */
  readonly listEvents: (query?: ListEventsQuery) => Effect.Effect<Page<PublicEvent>, ReadError>
  readonly getEvent: (eventId: string) => Effect.Effect<PublicEvent, ReadError>
  /** Registers a webhook endpoint; its answer is the only one, with rotate, to carry the signing secret. */
  readonly createWebhookEndpoint: (
    input: CreateWebhookEndpointInput,
    options?: WriteOptions,
  ) => Effect.Effect<WebhookEndpointWithSecret, WriteError>
  readonly listWebhookEndpoints: (query?: PageQuery) => Effect.Effect<Page<WebhookEndpoint>, ReadError>
  readonly getWebhookEndpoint: (endpointId: string) => Effect.Effect<WebhookEndpoint, ReadError>
  readonly updateWebhookEndpoint: (
    endpointId: string,
    input: UpdateWebhookEndpointInput,
  ) => Effect.Effect<WebhookEndpoint, WriteError>
  /** Delete webhook endpoint: a repeat, including a retry after a lost answer, is 404 LE0002. */
  readonly deleteWebhookEndpoint: (endpointId: string) => Effect.Effect<WebhookEndpoint, WriteError>
  /** A new signing secret; the replaced one keeps signing beside it for 24 hours. */
  readonly rotateWebhookEndpointSecret: (
    endpointId: string,
    options?: WriteOptions,
  ) => Effect.Effect<WebhookEndpointWithSecret, WriteError>
  /** The delivery attempts made to an endpoint, newest first. */
  readonly listWebhookDeliveries: (
    endpointId: string,
    query?: PageQuery,
  ) => Effect.Effect<Page<WebhookDelivery>, ReadError>
  /** Sends events to an endpoint again, with their ids: `event_ids`, or those in `[since, until)`. */
  readonly replayWebhookEvents: (
    endpointId: string,
    input: ReplayInput,
    options?: WriteOptions,
  ) => Effect.Effect<ReplayResult, WriteError>
  /**
   * Revokes the access token the client holds (RFC 7009) and forgets it: the next call gets a new one. Does
   * nothing when it holds none. Call it when the client is no longer needed, e.g. at shutdown.
   */
  readonly revokeAccessToken: Effect.Effect<void, ReadError>
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

// In the server's words, one per invalid field (`transaction.amount must be an integer from 1 to …`), not
// the schema's type tree (which shows the value: never a secret's).
const problemText = (error: ParseResult.ParseError) =>
  problemsOf(error.issue)
    .map(({ path, message }) => (path.length === 0 ? message : `${path.map(String).join(".")} ${message}`))
    .join("; ")

const invalidRequest = (operation: string) => (error: ParseResult.ParseError) =>
  new InvalidRequest({ operation, problem: problemText(error) })

const Credentials = Schema.Struct({ client_id: Text, client_secret: Text })

// What makes a credential unsendable (a NUL, an unpaired surrogate, an empty text), named by field only.
const credentialsProblem = (clientId: string, clientSecret: string) =>
  Either.match(
    Schema.decodeUnknownEither(Credentials, { errors: "all" })({
      client_id: clientId,
      client_secret: clientSecret,
    }),
    { onLeft: problemText, onRight: () => undefined },
  )

// Input is checked with the contract's own schema before anything is sent.
const checked = <A, I>(schema: Schema.Schema<A, I>, operation: string, input: I) =>
  Effect.mapError(Schema.decodeUnknown(schema, { errors: "all" })(input), invalidRequest(operation))

// Query parameters too, with the endpoint's own schema (a `limit` of 0 is the caller's mistake, not the
// server's): encoding checks them as the request would.
const checkedQuery = <A, I>(schema: Schema.Schema<A, I>, operation: string, query: A) =>
  Effect.as(
    Effect.mapError(Schema.encode(schema, { errors: "all" })(query), invalidRequest(operation)),
    query,
  )

/**
 * An id as one path segment, percent-encoded, so that an id taken from elsewhere can never name another route
 * (`../orders/<id>/cancel`). `.` and `..` cannot be sent at all (URL resolution removes them, and their encoded
 * forms too): InvalidRequest.
 */
const segment = (operation: string, id: string): Effect.Effect<string, InvalidRequest> =>
  id === "." || id === ".."
    ? Effect.fail(new InvalidRequest({ operation, problem: `the id "${id}" cannot be sent in a path` }))
    : Effect.succeed(encodeURIComponent(id))

/**
 * The Idempotency-Key of one call, fixed when the method is called (every retry and every run of the returned
 * effect carries it): the caller's, checked as the server checks it, or a fresh UUID.
 */
const keyOf = (operation: string, options: WriteOptions | undefined) => {
  const given = options?.idempotencyKey
  if (given === undefined) return Effect.succeed(newIdempotencyKey())
  return IdempotencyKey.parseIdempotencyKeyHeader(given, { required: false }).pipe(
    Effect.as(given),
    Effect.mapError(
      (error) =>
        new InvalidRequest({
          operation,
          problem: `idempotencyKey ${"problem" in error ? error.problem : "is required"}`,
        }),
    ),
  )
}

/** A call's failures as the caller gets them: a refusal with what its answer said (AnsweredApiError). */
type Answered<E> = Exclude<E, ProtocolFailure | ApiError> | ProtocolError | AnsweredApiError

/**
 * Runs one call: a POST with its Idempotency-Key on every attempt (`idempotencyKey`), or any other request
 * (null). A refusal becomes an AnsweredApiError, with the request id, key and headers of the attempt that got
 * it. A failure to get a token before the first attempt is reported with the call's key too: the call was not
 * sent, and may be retried later with it (after an attempt, the call's own RetriesExhausted says so). An
 * answer outside the contract names the key and the last attempt's request id (`onLastAttempt` sees the
 * attempt either way).
 */
const call = <A, E, Mapped = Answered<E>>(
  send: Effect.Effect<A, E>,
  idempotencyKey: string | null,
  critical: boolean,
  onLastAttempt: (attempt: LastAttempt, error: Answered<E>) => Mapped = (_, error) => error as Mapped,
): Effect.Effect<A, Mapped> =>
  Effect.suspend(() => {
    const settings: CallSettings = { idempotencyKey, critical, lastAttempt: noAttempt }
    return Effect.locally(settled(send), currentCall, Option.some(settings)).pipe(
      Effect.mapError((error) => {
        const attempt = settings.lastAttempt
        if (error instanceof ApiError)
          return onLastAttempt(attempt, new AnsweredApiError(error, attempt, idempotencyKey))
        if (error instanceof RetriesExhausted && error.idempotencyKey === null && idempotencyKey !== null)
          return onLastAttempt(attempt, new RetriesExhausted({ ...error, idempotencyKey }) as Answered<E>)
        if (error instanceof ProtocolError && idempotencyKey !== null) {
          const named = new ProtocolError({
            status: error.status ?? attempt.status,
            problem: error.problem,
            idempotencyKey,
            ...(attempt.requestId === null ? {} : { requestId: attempt.requestId }),
          })
          return onLastAttempt(attempt, named)
        }
        return onLastAttempt(attempt, error as Answered<E>)
      }),
    )
  })

/** A call without an Idempotency-Key (GET, PATCH, DELETE, the token's revocation). */
const unkeyed = <A, E>(send: Effect.Effect<A, E>) => call(send, null, false)

/** A POST with the call's key (see keyOf); input problems are InvalidRequest. */
const keyedPost = <A, E>(operation: string, options: WriteOptions | undefined, send: Effect.Effect<A, E>) => {
  const key = keyOf(operation, options)
  return Effect.flatMap(key, (idempotencyKey) => call(send, idempotencyKey, false))
}

/**
 * A critical POST: a 500 is not retried and becomes PendingOutcome, to reconcile by `referenceId`; so does an
 * answer outside the contract (a proxy's error page, say): the write may have happened either way.
 */
const criticalPost = <A, E>(
  send: Effect.Effect<A, E>,
  operation: CriticalOperation,
  referenceId: string,
  options: WriteOptions | undefined,
) =>
  Effect.flatMap(keyOf(operation, options), (idempotencyKey) =>
    call(send, idempotencyKey, true, (attempt, error) => {
      const pending = (problem: string, errors: ReadonlyArray<ApiError["errors"][number]>) =>
        new PendingOutcome({
          operation,
          referenceId,
          idempotencyKey,
          requestId: attempt.requestId,
          problem,
          errors,
        })
      if (error instanceof ApiError && error.status === 500) return pending("answered 500", error.errors)
      // Answered, but not as the contract says: not something a retry fixes, and the write may have happened.
      if (error instanceof ProtocolError && attempt.status !== null) return pending(error.message, [])
      return error
    }),
  )

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
    const problem = baseUrlProblem(options.baseUrl, options.allowInsecureHttp === true)
    if (problem !== undefined) return yield* Effect.dieMessage(problem)
    const base = yield* HttpClient.HttpClient
    const secret =
      typeof options.clientSecret === "string" ? Redacted.make(options.clientSecret) : options.clientSecret
    const unsendable = credentialsProblem(options.clientId, Redacted.value(secret))
    if (unsendable !== undefined)
      return yield* Effect.dieMessage(`the client credential cannot be sent: ${unsendable}`)
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
    const revoke = (token: string) =>
      oauth.revokeToken({
        payload: {
          token,
          token_type_hint: "access_token",
          client_id: options.clientId,
          client_secret: Redacted.value(secret),
        },
      })
    const api = yield* HttpApiClient.makeWith(PointsApi, {
      httpClient: resilientHttpClient(base, policy, Option.some(tokens)),
      baseUrl: options.baseUrl,
    })

    const client: PointsClient = {
      createUser: (input, writeOptions) =>
        keyedPost(
          "createUser",
          writeOptions,
          Effect.flatMap(checked(CreateUserBody, "createUser", input), (payload) =>
            api.users.createUser({ headers: keyFromCall, payload }),
          ),
        ),
      getUser: (userId) =>
        Effect.flatMap(segment("getUser", userId), (user_id) =>
          unkeyed(api.users.getUser({ path: { user_id } })),
        ),
      findUsers: (query = {}) =>
        Effect.flatMap(checkedQuery(FindUsersQuerySchema, "findUsers", query), (urlParams) =>
          unkeyed(api.users.findUsers({ urlParams })),
        ),
      updateUser: (userId, input) =>
        Effect.flatMap(
          Effect.zip(segment("updateUser", userId), checked(UpdateUserBody, "updateUser", input)),
          ([user_id, payload]) => unkeyed(api.users.updateUser({ path: { user_id }, payload })),
        ),
      closeUser: (userId) =>
        Effect.flatMap(segment("closeUser", userId), (user_id) =>
          unkeyed(api.users.closeUser({ path: { user_id } })),
        ),
      openPointsAccount: (userId, writeOptions) =>
        keyedPost(
          "openPointsAccount",
          writeOptions,
          Effect.flatMap(segment("openPointsAccount", userId), (user_id) =>
            api.users.openPointsAccount({ headers: keyFromCall, path: { user_id } }),
          ),
        ),
      getPointsAccount: (userId) =>
        Effect.flatMap(segment("getPointsAccount", userId), (user_id) =>
          unkeyed(api.users.getPointsAccount({ path: { user_id } })),
        ),
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
        Effect.flatMap(segment("getTransaction", transactionId), (transaction_id) =>
          unkeyed(api.points.getTransaction({ path: { transaction_id } })),
        ),
      findTransactions: (query = {}) =>
        Effect.flatMap(checkedQuery(FindTransactionsQuerySchema, "findTransactions", query), (urlParams) =>
          unkeyed(api.points.findTransactions({ urlParams })),
        ),
      createOrder: (input, writeOptions) => {
        const send = Effect.flatMap(checked(CreateOrderBody, "createOrder", input), (payload) =>
          api.orders.createOrder({ headers: keyFromCall, payload }),
        )
        return criticalPost(send, "createOrder", input.reference_id, writeOptions)
      },
      getOrder: (orderId) =>
        Effect.flatMap(segment("getOrder", orderId), (order_id) =>
          unkeyed(api.orders.getOrder({ path: { order_id } })),
        ),
      findOrders: (query = {}) =>
        Effect.flatMap(checkedQuery(FindOrdersQuerySchema, "findOrders", query), (urlParams) =>
          unkeyed(api.orders.findOrders({ urlParams })),
        ),
      cancelOrder: (orderId, writeOptions) =>
        keyedPost(
          "cancelOrder",
          writeOptions,
          Effect.flatMap(segment("cancelOrder", orderId), (order_id) =>
            api.orders.cancelOrder({ headers: keyFromCall, path: { order_id } }),
          ),
        ),
      listEvents: (query = {}) =>
        Effect.flatMap(checkedQuery(ListEventsQuerySchema, "listEvents", query), (urlParams) =>
          unkeyed(api.events.listEvents({ urlParams })),
        ),
      getEvent: (eventId) =>
        Effect.flatMap(segment("getEvent", eventId), (event_id) =>
          unkeyed(api.events.getEvent({ path: { event_id } })),
        ),
      createWebhookEndpoint: (input, writeOptions) =>
        keyedPost(
          "createWebhookEndpoint",
          writeOptions,
          Effect.flatMap(checked(CreateWebhookEndpointBody, "createWebhookEndpoint", input), (payload) =>
            api.webhookEndpoints.createWebhookEndpoint({ headers: keyFromCall, payload }),
          ),
        ),
      listWebhookEndpoints: (query = {}) =>
        Effect.flatMap(checkedQuery(WebhookEndpointsQuery, "listWebhookEndpoints", query), (urlParams) =>
          unkeyed(api.webhookEndpoints.listWebhookEndpoints({ urlParams })),
        ),
      getWebhookEndpoint: (endpointId) =>
        Effect.flatMap(segment("getWebhookEndpoint", endpointId), (endpoint_id) =>
          unkeyed(api.webhookEndpoints.getWebhookEndpoint({ path: { endpoint_id } })),
        ),
      updateWebhookEndpoint: (endpointId, input) =>
        Effect.flatMap(
          Effect.zip(
            segment("updateWebhookEndpoint", endpointId),
            checked(UpdateWebhookEndpointBody, "updateWebhookEndpoint", input),
          ),
          ([endpoint_id, payload]) =>
            unkeyed(api.webhookEndpoints.updateWebhookEndpoint({ path: { endpoint_id }, payload })),
        ),
      deleteWebhookEndpoint: (endpointId) =>
        Effect.flatMap(segment("deleteWebhookEndpoint", endpointId), (endpoint_id) =>
          unkeyed(api.webhookEndpoints.deleteWebhookEndpoint({ path: { endpoint_id } })),
        ),
      rotateWebhookEndpointSecret: (endpointId, writeOptions) =>
        keyedPost(
          "rotateWebhookEndpointSecret",
          writeOptions,
          Effect.flatMap(segment("rotateWebhookEndpointSecret", endpointId), (endpoint_id) =>
            api.webhookEndpoints.rotateWebhookEndpointSecret({ headers: keyFromCall, path: { endpoint_id } }),
          ),
        ),
      listWebhookDeliveries: (endpointId, query = {}) =>
        Effect.flatMap(
          Effect.zip(
            segment("listWebhookDeliveries", endpointId),
            checkedQuery(WebhookDeliveriesQuery, "listWebhookDeliveries", query),
          ),
          ([endpoint_id, urlParams]) =>
            unkeyed(api.webhookDeliveries.listDeliveries({ path: { endpoint_id }, urlParams })),
        ),
      replayWebhookEvents: (endpointId, input, writeOptions) =>
        keyedPost(
          "replayWebhookEvents",
          writeOptions,
          Effect.flatMap(
            Effect.zip(
              segment("replayWebhookEvents", endpointId),
              checked(ReplayBody, "replayWebhookEvents", input),
            ),
            ([endpoint_id, payload]) =>
              api.webhookDeliveries.replay({ headers: keyFromCall, path: { endpoint_id }, payload }),
          ),
        ),
      revokeAccessToken: Effect.flatMap(tokens.held, (held) =>
        Option.match(held, {
          onNone: () => Effect.void,
          // Forgotten only once revoked: a revocation that fails leaves the token in use, to revoke again.
          onSome: (token) => Effect.zipRight(unkeyed(revoke(token)), tokens.invalidate(token)),
        }),
      ),
    }
    return client
  })

import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { ApiError } from "@points/http-api"
import { Cause, Effect, Exit } from "effect"
import {
  AnsweredApiError,
  type InvalidRequest,
  makePointsClient,
  PendingOutcome,
  RetriesExhausted,
  type RetryPolicy,
} from "../src/index.js"
import { orderBody, transactionBody, userBody } from "./fixtures.js"
import { errorBody, type ScriptedServer, scriptedServer, tokenBody } from "./scripted-server.js"

// Small backoff so retries take milliseconds, not seconds.
const fast: Partial<RetryPolicy> = { initialDelay: "5 millis", maxDelay: "20 millis" }

const clientOf = (server: ScriptedServer, retry: Partial<RetryPolicy> = fast) =>
  makePointsClient({
    baseUrl: server.baseUrl,
    clientId: "client-1",
    clientSecret: "pos_cs_secret",
    retry,
  }).pipe(Effect.provide(FetchHttpClient.layer))

const movement = { user_id: "0198d7e2-0000-7000-8000-00000000u000", amount: 100, reference_id: "ref-1" }
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe("The Points client", () => {
  it.scopedLive("gets a token once, sends it as Bearer, and reuses it until it is due", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("GET", "/api/users/u-1", [{ status: 200, body: userBody("u-1", "active") }])
      const client = yield* clientOf(server)
      const user = yield* client.getUser("u-1")
      yield* client.getUser("u-1")
      expect(user).toMatchObject({ id: "u-1", status: "active" })
      const [token] = server.requestsTo("POST", "/api/oauth/token")
      expect(server.requestsTo("POST", "/api/oauth/token")).toHaveLength(1)
      expect(token?.headers["content-type"]).toContain("application/x-www-form-urlencoded")
      expect(Object.fromEntries(new URLSearchParams(token?.body))).toEqual({
        grant_type: "client_credentials",
        client_id: "client-1",
        client_secret: "pos_cs_secret",
      })
      expect(token?.headers["idempotency-key"]).toBeUndefined()
      const reads = server.requestsTo("GET", "/api/users/u-1")
      expect(reads.map((r) => r.headers.authorization)).toEqual(["Bearer tok-1", "Bearer tok-1"])
      expect(reads.map((r) => r.headers["idempotency-key"])).toEqual([undefined, undefined])
    }),
  )

  it.scopedLive("renews the token when it expires, and once more when the server refuses it", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      // The first token expires at once, the others live an hour.
      server.tokenLifetimes([0, 3600])
      server.script("GET", "/api/users/u-1", [
        { status: 200, body: userBody("u-1") },
        { status: 200, body: userBody("u-1") },
        { status: 401, body: errorBody("GH1003", "invalid token") },
        { status: 200, body: userBody("u-1") },
      ])
      const client = yield* clientOf(server)
      yield* client.getUser("u-1")
      yield* client.getUser("u-1")
      yield* client.getUser("u-1")
      const reads = server.requestsTo("GET", "/api/users/u-1")
      expect(reads.map((r) => r.headers.authorization)).toEqual([
        "Bearer tok-1",
        "Bearer tok-2",
        "Bearer tok-2",
        "Bearer tok-3",
      ])
      expect(server.requestsTo("POST", "/api/oauth/token")).toHaveLength(3)
    }),
  )

  it.scopedLive("sends a fresh Idempotency-Key with every POST, or the caller's", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/points/add", [{ status: 201, body: transactionBody("t-1", "ref-1") }])
      server.script("POST", "/api/orders", [{ status: 201, body: orderBody("o-1", "order-1") }])
      const client = yield* clientOf(server)
      yield* client.addPoints(movement)
      yield* client.addPoints(movement)
      const order = yield* client.createOrder(
        {
          user_id: movement.user_id,
          reference_id: "order-1",
          items: [{ sku: "MUG", quantity: 1, points: 50 }],
        },
        { idempotencyKey: "cart-42" },
      )
      expect(order).toMatchObject({ id: "o-1", status: "pending" })
      const [first, second] = server
        .requestsTo("POST", "/api/points/add")
        .map((r) => r.headers["idempotency-key"])
      expect(first).toMatch(uuid)
      expect(second).toMatch(uuid)
      expect(first).not.toBe(second)
      expect(JSON.parse(server.requestsTo("POST", "/api/points/add")[0]?.body ?? "")).toEqual({
        transaction: movement,
      })
      expect(server.requestsTo("POST", "/api/orders")[0]?.headers["idempotency-key"]).toBe("cart-42")
    }),
  )

  it.scopedLive("retries no response, 502, 503 and 504 with the same Idempotency-Key until it succeeds", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/points/add", [
        "drop",
        { status: 502 },
        {
          status: 503,
          body: errorBody("SV5003", "service unavailable: retry later"),
          headers: { "retry-after": "0" },
        },
        { status: 504 },
        { status: 201, body: transactionBody("t-1", "ref-1") },
      ])
      const client = yield* clientOf(server)
      const transaction = yield* client.addPoints(movement)
      expect(transaction).toMatchObject({ id: "t-1", reference_id: "ref-1" })
      const keys = server.requestsTo("POST", "/api/points/add").map((r) => r.headers["idempotency-key"])
      expect(keys).toHaveLength(5)
      expect(new Set(keys).size).toBe(1)
      expect(keys[0]).toMatch(uuid)
    }),
  )

  it.scopedLive(
    "does not retry a 500 on Add points: the outcome is pending, to reconcile by reference_id",
    () =>
      Effect.gen(function* () {
        const server = yield* scriptedServer
        server.script("POST", "/api/points/add", [
          { status: 500, body: errorBody("SV5000", "unexpected server error") },
          { status: 201, body: transactionBody("t-1", "ref-1") },
        ])
        const client = yield* clientOf(server)
        const error = yield* Effect.flip(client.addPoints(movement, { idempotencyKey: "add-ref-1" }))
        expect(error).toBeInstanceOf(PendingOutcome)
        expect(error).toMatchObject({
          operation: "addPoints",
          referenceId: "ref-1",
          idempotencyKey: "add-ref-1",
        })
        expect(error.message).toContain('findTransactions({ reference_id: "ref-1", user_id }) and its add')
        expect(server.requestsTo("POST", "/api/points/add")).toHaveLength(1)
      }),
  )

  it.scopedLive("retries a 500 on a read", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("GET", "/api/orders/o-1", [
        { status: 500, body: errorBody("SV5000", "unexpected server error") },
        { status: 200, body: orderBody("o-1", "order-1") },
      ])
      const client = yield* clientOf(server)
      expect(yield* client.getOrder("o-1")).toMatchObject({ id: "o-1" })
      expect(server.requestsTo("GET", "/api/orders/o-1")).toHaveLength(2)
    }),
  )

  it.scopedLive("waits for Retry-After on 429, then retries with the same key", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/users", [
        { status: 429, body: errorBody("GH1009", "rate limit reached"), headers: { "retry-after": "1" } },
        { status: 201, body: userBody("u-1") },
      ])
      const client = yield* clientOf(server)
      const started = Date.now()
      const user = yield* client.createUser({ partner_user_id: "p-1", email: "ada@example.com" })
      expect(user.id).toBe("u-1")
      const [throttled, accepted] = server.requestsTo("POST", "/api/users")
      expect(accepted?.headers["idempotency-key"]).toBe(throttled?.headers["idempotency-key"])
      expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    }),
  )

  it.scopedLive("answers a 404 with the typed ApiError, code LE0002, without retrying", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("GET", "/api/points/transactions/t-9", [
        { status: 404, body: errorBody("LE0002", "transaction not found") },
      ])
      const client = yield* clientOf(server)
      const error = yield* Effect.flip(client.getTransaction("t-9"))
      expect(error).toBeInstanceOf(ApiError)
      expect(error).toMatchObject({
        status: 404,
        errors: [{ code: "LE0002", message: "transaction not found" }],
      })
      const [sent] = server.requestsTo("GET", "/api/points/transactions/t-9")
      expect(server.requestsTo("GET", "/api/points/transactions/t-9")).toHaveLength(1)
      // Named by the request id the attempt sent (and the server knows it by); a read carries no key.
      expect(error).toMatchObject({
        requestId: sent?.headers["x-request-id"],
        idempotencyKey: null,
        replayed: false,
        retryAfterSeconds: null,
      })
      expect(error.message).toBe(`LE0002: transaction not found (request ${sent?.headers["x-request-id"]})`)
    }),
  )

  it.scopedLive(
    "gives a refusal its attempt's request id, its key, whether it was replayed, and its Retry-After",
    () =>
      Effect.gen(function* () {
        const server = yield* scriptedServer
        // The server echoes the request id it was sent, as the API does; this one answers a recorded 409.
        server.script("POST", "/api/webhooks/endpoints", [
          {
            status: 409,
            body: errorBody("LE0007", "a partner has at most 20 webhook endpoints"),
            headers: { "x-request-id": "req-echoed-1", "idempotent-replayed": "true" },
          },
        ])
        server.script("POST", "/api/users", [
          { status: 429, body: errorBody("GH1009", "rate limit reached"), headers: { "retry-after": "600" } },
        ])
        const client = yield* clientOf(server)
        const replayed = yield* Effect.flip(
          client.createWebhookEndpoint({ url: "https://example.com/hooks" }, { idempotencyKey: "hook-1" }),
        )
        expect(replayed).toBeInstanceOf(ApiError)
        expect(replayed).toMatchObject({
          _tag: "ApiError",
          status: 409,
          requestId: "req-echoed-1",
          idempotencyKey: "hook-1",
          replayed: true,
          retryAfterSeconds: null,
        })
        // A wait longer than maxRetryAfter (120 s by default) is returned, with how long to wait.
        const throttled = yield* Effect.flip(
          client.createUser({ partner_user_id: "p-1", email: "ada@example.com" }),
        )
        const [sent] = server.requestsTo("POST", "/api/users")
        expect(throttled).toMatchObject({
          status: 429,
          requestId: sent?.headers["x-request-id"],
          idempotencyKey: sent?.headers["idempotency-key"],
          replayed: false,
          retryAfterSeconds: 600,
        })
      }),
  )

  it.scopedLive("reads an error code it does not know (a later API version's) as the ApiError it is", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/points/add", [
        { status: 409, body: errorBody("LE9001", "points are frozen for this user") },
      ])
      const client = yield* clientOf(server)
      const error = yield* Effect.flip(client.addPoints(movement, { idempotencyKey: "add-later-code" }))
      // A definite refusal, not an answer outside the contract: no PendingOutcome, no retry.
      expect(error).toBeInstanceOf(ApiError)
      expect(error).toMatchObject({
        status: 409,
        errors: [{ code: "LE9001", message: "points are frozen for this user" }],
      })
      expect(server.requestsTo("POST", "/api/points/add")).toHaveLength(1)
    }),
  )

  it.scopedLive("gives up after maxRetries with RetriesExhausted, naming the key to retry with later", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/orders", [
        { status: 503, body: errorBody("SV5003", "service unavailable") },
      ])
      const client = yield* clientOf(server, { ...fast, maxRetries: 2 })
      const input = {
        user_id: movement.user_id,
        reference_id: "order-1",
        items: [{ sku: "MUG", quantity: 1, points: 50 }],
      }
      const error = yield* Effect.flip(client.createOrder(input, { idempotencyKey: "order-key" }))
      expect(error).toBeInstanceOf(RetriesExhausted)
      expect(error).toMatchObject({ attempts: 3, lastStatus: 503, idempotencyKey: "order-key" })
      const sent = server.requestsTo("POST", "/api/orders").map((r) => r.headers["x-request-id"])
      expect(sent).toHaveLength(3)
      // Each attempt is a request of its own to the server; the error names the last one.
      expect(new Set(sent).size).toBe(3)
      expect(sent.every((id) => uuid.test(id as string))).toBe(true)
      expect((error as RetriesExhausted).requestId).toBe(sent[2])
    }),
  )

  it.scopedLive(
    "ends a call at its deadline with RetriesExhausted, naming the key, however it is spent",
    () =>
      Effect.gen(function* () {
        const server = yield* scriptedServer
        const unavailable = { status: 503, body: errorBody("SV5003", "service unavailable") }
        // A Retry-After past the deadline: no wait that cannot end in time.
        server.script("POST", "/api/users", [{ ...unavailable, headers: { "retry-after": "30" } }])
        const later = yield* Effect.flip(
          (yield* clientOf(server, { ...fast, deadline: "5 seconds" })).createUser({
            partner_user_id: "p-1",
            email: "ada@example.com",
          }),
        )
        expect(later).toMatchObject({ _tag: "RetriesExhausted", attempts: 1, lastStatus: 503 })
        expect(server.requestsTo("POST", "/api/users")).toHaveLength(1)

        // Backoff alone: 15 retries would take 15 s. The jitter is pinned to its top (every wait exactly 1 s)
        // so that no attempt starts near the deadline, where whether its answer beats it would be a race: the
        // second attempt starts at 1 s and is answered long before 1.5 s, even on a slow machine; a third
        // would start at 2 s.
        server.script("POST", "/api/points/add", [unavailable])
        const slow = { initialDelay: "1 second", maxDelay: "1 second", deadline: "1500 millis" } as const
        const backingOff = yield* Effect.flip(
          (yield* clientOf(server, slow))
            .addPoints(movement, { idempotencyKey: "add-deadline" })
            .pipe(Effect.withRandomFixed([1])),
        )
        expect(backingOff).toBeInstanceOf(RetriesExhausted)
        expect(server.requestsTo("POST", "/api/points/add")).toHaveLength(2)
        expect(backingOff).toMatchObject({
          attempts: 2,
          lastStatus: 503,
          idempotencyKey: "add-deadline",
          lastFailure: "status 503; the next attempt would start past the deadline",
        })

        // An attempt that stalls past the deadline, well within its own time limit: abandoned, outcome open.
        server.script("POST", "/api/points/subtract", ["stall"])
        const stalled = yield* Effect.flip(
          (yield* clientOf(server, {
            ...fast,
            requestTimeout: "30 seconds",
            deadline: "300 millis",
          })).subtractPoints(movement, { idempotencyKey: "subtract-stalled" }),
        )
        expect(stalled).toMatchObject({
          _tag: "RetriesExhausted",
          attempts: 1,
          lastStatus: null,
          idempotencyKey: "subtract-stalled",
          lastFailure: "the call's deadline passed before an answer",
        })
      }),
  )

  it.scopedLive("refuses input that breaks the contract before sending anything", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      const client = yield* clientOf(server)
      const error = yield* Effect.flip(client.addPoints({ ...movement, amount: 0, reference_id: "" }))
      expect(error._tag).toBe("InvalidRequest")
      // Each invalid field in the server's words, not the schema's type tree.
      const problems = (error as InvalidRequest).problem.split("; ")
      expect(problems).toHaveLength(2)
      expect(problems.find((problem) => problem.startsWith("transaction.amount must be"))).toBeDefined()
      expect(problems.find((problem) => problem.startsWith("transaction.reference_id "))).toBeDefined()
      const query = yield* Effect.flip(client.findUsers({ limit: 0 }))
      expect(query).toMatchObject({
        _tag: "InvalidRequest",
        problem: "limit must be an integer from 1 to 100",
      })
      expect(server.received).toHaveLength(0)
    }),
  )

  it.scopedLive("fixes a Create user's key when it is called: running the effect twice sends one key", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/users", [{ status: 201, body: userBody("u-1") }])
      const client = yield* clientOf(server)
      const create = client.createUser({ partner_user_id: "p-1", email: "ada@example.com" })
      yield* create
      yield* create
      const keys = server.requestsTo("POST", "/api/users").map((r) => r.headers["idempotency-key"])
      expect(keys).toHaveLength(2)
      expect(keys[0]).toMatch(uuid)
      expect(keys[1]).toBe(keys[0])
    }),
  )

  it.scopedLive("sends an id as one path segment: it can never name another route", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      const client = yield* clientOf(server)
      yield* Effect.flip(client.openPointsAccount("../orders/o-1/cancel?"))
      yield* Effect.flip(client.getOrder("a/b#c"))
      expect(server.received.filter((r) => r.path !== "/api/oauth/token").map((r) => r.path)).toEqual([
        "/api/users/..%2Forders%2Fo-1%2Fcancel%3F/points-account",
        "/api/orders/a%2Fb%23c",
      ])
      // A dot segment is removed by URL resolution however it is encoded: it is never sent.
      for (const id of ["..", "."]) {
        expect((yield* Effect.flip(client.getUser(id)))._tag).toBe("InvalidRequest")
      }
      expect(server.received.filter((r) => r.path !== "/api/oauth/token")).toHaveLength(2)
    }),
  )

  it.scopedLive("refuses a bad query or Idempotency-Key as InvalidRequest, sending nothing", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      const client = yield* clientOf(server)
      const refusals = [
        yield* Effect.flip(client.findUsers({ limit: 0 })),
        yield* Effect.flip(client.findTransactions({ limit: 1.5 })),
        yield* Effect.flip(client.findOrders({ status: "bogus" as "pending" })),
        yield* Effect.flip(client.addPoints(movement, { idempotencyKey: "" })),
        yield* Effect.flip(client.cancelOrder("o-1", { idempotencyKey: "café" })),
      ]
      expect(refusals.map((error) => error._tag)).toEqual(Array(5).fill("InvalidRequest"))
      expect(refusals[3]?.message).toContain("idempotencyKey must not be empty")
      expect(server.received).toHaveLength(0)
    }),
  )

  it.scopedLive("reports a token it could not get with the call's Idempotency-Key", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/oauth/token", [{ status: 503 }])
      const client = yield* clientOf(server, { ...fast, maxRetries: 1 })
      const error = yield* Effect.flip(client.addPoints(movement, { idempotencyKey: "add-7" }))
      expect(error).toMatchObject({ _tag: "RetriesExhausted", idempotencyKey: "add-7", lastStatus: 503 })
      expect(server.requestsTo("POST", "/api/points/add")).toHaveLength(0)
      expect(error.message).toMatch(
        /^no access token \(POST .*\/api\/oauth\/token failed 2 times, last: status 503\)/,
      )
      expect(error.message).toContain('the call was not sent; retry it later with Idempotency-Key "add-7"')
    }),
  )

  it.scopedLive(
    "ends a call whose token cannot be renewed after an attempt as the call's RetriesExhausted, not as unsent",
    () =>
      Effect.gen(function* () {
        const server = yield* scriptedServer
        // The first token is refused by the API (revoked, say); renewing it, the credential is refused.
        server.script("POST", "/api/oauth/token", [
          { status: 200, body: tokenBody(1) },
          {
            status: 401,
            body: { ...errorBody("GH1001", "invalid client credentials"), error: "invalid_client" },
          },
        ])
        server.script("POST", "/api/points/add", [
          {
            status: 401,
            body: errorBody("GH1003", "invalid token"),
            headers: { "x-request-id": "req-add-1" },
          },
        ])
        const client = yield* clientOf(server)
        const error = yield* Effect.flip(client.addPoints(movement, { idempotencyKey: "add-renewal" }))
        // Sent once: its outcome is the call's to report, with the attempt that was answered.
        expect(error).toMatchObject({
          _tag: "RetriesExhausted",
          url: expect.stringContaining("/api/points/add"),
          attempts: 1,
          lastStatus: 401,
          idempotencyKey: "add-renewal",
          requestId: "req-add-1",
        })
        expect(error.message).toContain("no access token (GH1001: invalid client credentials")
        expect(error.message).not.toContain("not sent")
        expect(server.requestsTo("POST", "/api/points/add")).toHaveLength(1)
      }),
  )

  it.scopedLive("names the revocation's answer when it is refused, and keeps the token to revoke again", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("GET", "/api/users/u-1", [{ status: 200, body: userBody("u-1") }])
      server.script("POST", "/api/oauth/revoke", [
        {
          status: 400,
          body: errorBody("GH1006", "token is required"),
          headers: { "x-request-id": "req-rv-1" },
        },
      ])
      const client = yield* clientOf(server)
      yield* client.getUser("u-1")
      const error = yield* Effect.flip(client.revokeAccessToken)
      expect(error).toMatchObject({
        _tag: "ApiError",
        status: 400,
        requestId: "req-rv-1",
        idempotencyKey: null,
      })
      // Still held: the next call sends the same token, and needs no new one.
      yield* client.getUser("u-1")
      expect(server.requestsTo("POST", "/api/oauth/token")).toHaveLength(1)
    }),
  )

  it.effect("builds a refusal for a test double without an attempt", () =>
    Effect.sync(() => {
      const made = AnsweredApiError.make({
        status: 404,
        errors: [{ id: "e-1", code: "LE0002", message: "not found" }],
      })
      expect(made).toBeInstanceOf(ApiError)
      expect(made).toMatchObject({
        _tag: "ApiError",
        status: 404,
        requestId: null,
        idempotencyKey: null,
        replayed: false,
        retryAfterSeconds: null,
      })
      expect(made.message).toBe("LE0002: not found")
    }),
  )

  it.scopedLive("surfaces bad client credentials as ApiError GH1001", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/oauth/token", [
        {
          status: 401,
          body: { ...errorBody("GH1001", "invalid client credentials"), error: "invalid_client" },
        },
      ])
      const client = yield* clientOf(server)
      const error = yield* Effect.flip(client.getUser("u-1"))
      expect(error).toMatchObject({ _tag: "ApiError", status: 401, errors: [{ code: "GH1001" }] })
      // Refused at the token endpoint: the call itself was never sent, so no attempt names it.
      expect(error).toMatchObject({ error: "invalid_client", requestId: null, idempotencyKey: null })
      expect(server.requestsTo("GET", "/api/users/u-1")).toHaveLength(0)
    }),
  )

  it.scopedLive("retries 409 IK1002 (an earlier attempt still running) with the same key; no other 409", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/points/add", [
        { status: 409, body: errorBody("IK1002", "a request with this key is in progress") },
        { status: 409, body: errorBody("IK1002", "a request with this key is in progress") },
        { status: 201, body: transactionBody("t-1", "ref-1") },
      ])
      server.script("POST", "/api/points/subtract", [
        { status: 409, body: errorBody("LE0001", "the user is not active") },
      ])
      const client = yield* clientOf(server)
      const added = yield* client.addPoints(movement, { idempotencyKey: "add-409" })
      expect(added).toMatchObject({ id: "t-1" })
      const keys = server.requestsTo("POST", "/api/points/add").map((r) => r.headers["idempotency-key"])
      expect(keys).toEqual(["add-409", "add-409", "add-409"])
      const refused = yield* Effect.flip(client.subtractPoints(movement))
      expect(refused).toMatchObject({ _tag: "ApiError", status: 409, errors: [{ code: "LE0001" }] })
      expect(server.requestsTo("POST", "/api/points/subtract")).toHaveLength(1)
    }),
  )

  it.scopedLive("retries an answer whose body stalls or breaks off, with the same key", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/points/add", [
        "stall",
        { status: 201, cut: transactionBody("t-1", "ref-1") },
        { status: 201, body: transactionBody("t-1", "ref-1") },
      ])
      // Long enough for a slow machine's real answers, short enough to wait out the stall.
      const client = yield* clientOf(server, { ...fast, requestTimeout: "1 second" })
      const added = yield* client.addPoints(movement, { idempotencyKey: "add-cut" })
      expect(added).toMatchObject({ id: "t-1", reference_id: "ref-1" })
      const keys = server.requestsTo("POST", "/api/points/add").map((r) => r.headers["idempotency-key"])
      expect(keys).toEqual(["add-cut", "add-cut", "add-cut"])
    }),
  )

  it.scopedLive(
    "holds a critical write answered outside the contract as PendingOutcome, with its request id",
    () =>
      Effect.gen(function* () {
        const server = yield* scriptedServer
        server.script("POST", "/api/points/add", [
          {
            status: 500,
            raw: "<html>Bad gateway of a proxy</html>",
            headers: { "content-type": "text/html" },
          },
          { status: 201, body: { id: "t-1" } },
        ])
        server.script("POST", "/api/users", [{ status: 201, body: { id: "u-1" } }])
        const client = yield* clientOf(server)
        for (const key of ["add-html", "add-partial"]) {
          const error = yield* Effect.flip(client.addPoints(movement, { idempotencyKey: key }))
          expect(error).toBeInstanceOf(PendingOutcome)
          const sent = server.requestsTo("POST", "/api/points/add").at(-1)
          expect(error).toMatchObject({
            operation: "addPoints",
            referenceId: "ref-1",
            idempotencyKey: key,
            requestId: sent?.headers["x-request-id"],
            errors: [],
          })
          expect((error as PendingOutcome).problem).toMatch(/unexpected answer|does not follow the contract/)
        }
        // Neither was retried: the write may have happened.
        expect(server.requestsTo("POST", "/api/points/add")).toHaveLength(2)
        // A write that is not critical says so as a ProtocolError naming its key and status.
        const created = yield* Effect.flip(
          client.createUser(
            { partner_user_id: "p-1", email: "ada@example.com" },
            { idempotencyKey: "user-1" },
          ),
        )
        expect(created).toMatchObject({ _tag: "ProtocolError", status: 201, idempotencyKey: "user-1" })
      }),
  )

  it.scopedLive("lets concurrent calls share one token fetch, and its failure", () =>
    Effect.gen(function* () {
      const server = yield* scriptedServer
      server.script("POST", "/api/oauth/token", [{ status: 503 }])
      server.script("GET", "/api/users/u-1", [{ status: 200, body: userBody("u-1") }])
      const client = yield* clientOf(server, { ...fast, maxRetries: 2 })
      const failures = yield* Effect.all(
        Array.from({ length: 5 }, () => Effect.flip(client.getUser("u-1"))),
        { concurrency: "unbounded" },
      )
      expect(failures.map((error) => error._tag)).toEqual(Array(5).fill("RetriesExhausted"))
      // One fetch of three attempts, not five fetches one after another.
      expect(server.requestsTo("POST", "/api/oauth/token")).toHaveLength(3)
      expect(server.requestsTo("GET", "/api/users/u-1")).toHaveLength(0)
    }),
  )

  it.effect("accepts https, or plain http only to this machine or when allowed", () =>
    Effect.gen(function* () {
      const make = (baseUrl: string, allowInsecureHttp?: boolean) =>
        makePointsClient({
          baseUrl,
          clientId: "client-1",
          clientSecret: "pos_cs_secret",
          ...(allowInsecureHttp === undefined ? {} : { allowInsecureHttp }),
        }).pipe(Effect.provide(FetchHttpClient.layer), Effect.exit)
      for (const accepted of [
        "https://points.example.com",
        "http://127.0.0.1:3000",
        "http://localhost:3000",
        "http://[::1]:3000",
      ]) {
        expect(Exit.isSuccess(yield* make(accepted)), accepted).toBe(true)
      }
      expect(Exit.isSuccess(yield* make("http://points.example.com", true))).toBe(true)
      for (const refused of [
        "http://points.example.com",
        "http://127.0.0.1.example.com",
        "ftp://points.example.com",
        "points.example.com",
      ]) {
        const exit = yield* make(refused)
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause), refused).toBe(true)
        if (Exit.isFailure(exit)) expect(Cause.pretty(exit.cause)).toContain("baseUrl")
      }
    }),
  )

  it.effect("refuses at once a credential that cannot be sent, naming the field and never the secret", () =>
    Effect.gen(function* () {
      const make = (clientId: string, clientSecret: string) =>
        makePointsClient({ baseUrl: "https://points.example.com", clientId, clientSecret }).pipe(
          Effect.provide(FetchHttpClient.layer),
          Effect.exit,
        )
      for (const [clientId, clientSecret, field] of [
        ["client-1", "pos_cs_TOPSECRET\u0000x", "client_secret"],
        ["client-1", "pos_cs_TOPSECRET\ud800", "client_secret"],
        ["client\u0000-1", "pos_cs_TOPSECRET", "client_id"],
      ] as const) {
        const exit = yield* make(clientId, clientSecret)
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause), field).toBe(true)
        const text = Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
        expect(text).toContain(field)
        expect(text).not.toContain("TOPSECRET")
      }
    }),
  )
})

import { existsSync, readFileSync } from "node:fs"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer, it as plain } from "@effect/vitest"
import * as Domain from "@points/domain"
import { ERROR_CODES_EXTENSION } from "@points/http-api"
import { Effect } from "effect"
import { uuidv7 as uuidV7 } from "uuidv7"
import { publishedDocument } from "./contract-conformance.js"
import {
  databaseDigest,
  errorCodesServer,
  type Partner,
  TheWorld,
  type World,
  whileKeyHeld,
} from "./error-codes.fixtures.js"
import { ADMIN_TOKEN, call, newPartner, type Reply } from "./harness.js"

// Issue 4: every endpoint's success and every error code it can give, over HTTP. One table, grouped by
// endpoint: each endpoint names a valid request and its success, and the rows of the errors it can give. The
// protocol rows every endpoint of a kind gives (GH1003 without a valid token, GH1010 and GH1008 on a body,
// IK1001 and IK1002 on an idempotent POST) are derived from what the endpoint is. Each error row asserts the
// status, the code of every entry, the published body and, for a write, that nothing changed in the database.

type Code = Domain.ErrorCode
type Env = Effect.Effect.Context<ReturnType<typeof call>> | SqlClient.SqlClient

/** Who sends a request decides its Authorization header. */
type Who = Partner | "admin" | "anonymous"

/** A request of the table. */
interface Req {
  readonly method: string
  readonly path: string
  readonly as: Who
  readonly json?: unknown
  readonly body?: string
  readonly headers?: Readonly<Record<string, string>>
  /** Sent while another request holds this Idempotency-Key (IK1002). */
  readonly heldKey?: string
}

/** Makes a row's request in the world; making it may write (an order to cancel), before the row's snapshot. */
type Build = (world: World) => Req | Effect.Effect<Req, never, Env>

/** An error (or a further success, code null) an endpoint gives, and the scenario that makes it give it. */
interface Row {
  readonly code: Code | null
  readonly status: number
  readonly when: string
  readonly request: Build
  /** Further checks of the answer (a message, a header). */
  readonly check?: ((reply: Reply) => void) | undefined
}

/** One endpoint: its valid request and success, what kind it is, and its own error rows. */
interface Endpoint {
  readonly route: string
  /** A valid request, made fresh for each use. */
  readonly valid: Build
  readonly success: readonly [status: number, check: (reply: Reply, world: World) => void]
  /** Takes a body: GH1010 for another media type, GH1008 over 1 MiB. */
  readonly body?: "json" | "form"
  /** An idempotent POST: IK1001 for a key reused with another request, IK1002 while it is held. */
  readonly idempotent?: boolean
  readonly rows: ReadonlyArray<Row>
}

const refuse = (
  code: Code,
  status: number,
  when: string,
  request: Build,
  check?: (reply: Reply) => void,
): Row => ({ code, status, when, request, check })

const answers = (status: number, when: string, request: Build, check?: (reply: Reply) => void): Row => ({
  code: null,
  status,
  when,
  request,
  check,
})

const build = (request: Build, world: World): Effect.Effect<Req, never, Env> => {
  const made = request(world)
  return Effect.isEffect(made) ? made : Effect.succeed(made)
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const internals =
  /SELECT|INSERT|UPDATE |DELETE FROM|relation |violates|injected|\bat .*\.[jt]s|Error:|undefined|\n/

let serial = 0
/** A reference id or key never used before in this file. */
const fresh = (prefix: string) => `${prefix}-${++serial}-${Math.random().toString(36).slice(2, 8)}`

const admin = "admin" as const
const anonymous = "anonymous" as const
const hooks = "/api/webhooks/endpoints"
const unknownId = uuidV7()

const get = (as: Who, path: string): Req => ({ method: "GET", path, as })
const del = (as: Who, path: string): Req => ({ method: "DELETE", path, as })
const patch = (as: Who, path: string, json: unknown): Req => ({ method: "PATCH", path, as, json })
const post = (as: Who, path: string, json?: unknown, headers?: Record<string, string>): Req => ({
  method: "POST",
  path,
  as,
  ...(json === undefined ? {} : { json }),
  ...(headers === undefined ? {} : { headers }),
})
const keyed = () => ({ "idempotency-key": fresh("key") })
const postForm = (
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Req => ({
  method: "POST",
  path,
  as: anonymous,
  body: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
})
const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
})

const send = (request: Req) =>
  call(request.method, request.path, {
    ...(request.json === undefined ? {} : { json: request.json }),
    ...(request.body === undefined ? {} : { body: request.body }),
    headers: {
      ...(request.as === admin ? { authorization: `Bearer ${ADMIN_TOKEN}` } : {}),
      ...(typeof request.as === "object" ? { authorization: `Bearer ${request.as.token}` } : {}),
      ...request.headers,
    },
  })

const move = (userId: unknown, amount: number, reference = fresh("ref")) => ({
  transaction: { user_id: userId, amount, reference_id: reference },
})
const item = (points: number) => ({ sku: "MUG", quantity: 1, points })
const order = (userId: string, items: ReadonlyArray<unknown> = [item(10)]) => ({
  user_id: userId,
  reference_id: fresh("order"),
  items,
})
const placeOrder = (w: World, userId: string, items?: ReadonlyArray<unknown>) =>
  post(w.a, "/api/orders", order(userId, items), keyed())

const newOrderOfA = (w: World) =>
  Effect.map(send(placeOrder(w, w.funded)), (reply) => reply.body.id as string)
const newEndpointOfA = (w: World) =>
  Effect.map(
    send(post(w.a, hooks, { url: "https://hooks.example.com/more" })),
    (reply) => reply.body.id as string,
  )
const newCredential = (w: World) =>
  Effect.map(
    send(post(admin, `/admin/api/partners/${w.adminPartner}/clients`, {})),
    (reply) => reply.body.client_id as string,
  )
/** Runs `request` once (it must succeed), then answers it again: the repeat is the row. */
const repeated = (request: Req) =>
  Effect.map(send(request), (first) => {
    expect(first.status, first.text).toBeLessThan(300)
    return request
  })

/** The published error body, with every entry of the code, and nothing internal in a message. */
const expectError = (reply: Reply, status: number, code: Code, oauth: boolean) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.headers.get("content-type")).toContain("application/json")
  expect(Object.keys(reply.body).sort()).toEqual(
    oauth ? ["error", "error_description", "errors"] : ["errors"],
  )
  expect(reply.body.errors.length).toBeGreaterThan(0)
  for (const entry of reply.body.errors) {
    expect(Object.keys(entry).sort()).toEqual(["code", "id", "message"])
    expect(entry.id).toMatch(uuid)
    expect(entry.code).toBe(code)
    expect(typeof entry.message).toBe("string")
    expect(entry.message.length).toBeGreaterThan(0)
    expect(entry.message).not.toMatch(internals)
  }
}

const firstMessage = (text: string) => (reply: Reply) => expect(reply.body.errors[0].message).toBe(text)

// ---------------------------------------------------------------------------------------------------------
// The table, by endpoint.

const endpoints: ReadonlyArray<Endpoint> = [
  // OAuth: clients authenticate with their credentials, not a bearer token.
  {
    route: "POST /api/oauth/token",
    body: "form",
    valid: (w) => postForm("/api/oauth/token", { client_id: w.a.clientId, client_secret: w.a.clientSecret }),
    success: [200, (reply) => expect(reply.body.token_type).toBe("Bearer")],
    rows: [
      refuse(
        "GH1001",
        401,
        "the secret is wrong",
        (w) => post(anonymous, "/api/oauth/token", { client_id: w.a.clientId, client_secret: "pos_cs_x" }),
        (reply) => expect(reply.body.error).toBe("invalid_client"),
      ),
      refuse("GH1001", 401, "no credentials are given", () => postForm("/api/oauth/token", {})),
      refuse("GH1001", 401, "the client is unknown", (w) =>
        postForm("/api/oauth/token", { client_id: unknownId, client_secret: w.a.clientSecret }),
      ),
      refuse(
        "GH1001",
        401,
        "HTTP Basic credentials are wrong (with a Basic challenge)",
        (w) => postForm("/api/oauth/token", { grant_type: "client_credentials" }, basic(w.a.clientId, "x")),
        (reply) => expect(reply.headers.get("www-authenticate")).toContain("Basic"),
      ),
      refuse(
        "GH1007",
        400,
        "the grant type is not client_credentials",
        (w) =>
          postForm("/api/oauth/token", {
            grant_type: "password",
            client_id: w.a.clientId,
            client_secret: w.a.clientSecret,
          }),
        (reply) => expect(reply.body.error).toBe("unsupported_grant_type"),
      ),
      refuse("GH1006", 400, "the client authenticates with Basic and in the body", (w) =>
        postForm(
          "/api/oauth/token",
          { client_id: w.a.clientId, client_secret: w.a.clientSecret },
          basic(w.a.clientId, w.a.clientSecret),
        ),
      ),
    ],
  },
  {
    route: "POST /api/oauth/revoke",
    body: "form",
    valid: (w) =>
      Effect.map(
        send(postForm("/api/oauth/token", { client_id: w.a.clientId, client_secret: w.a.clientSecret })),
        (issued) =>
          postForm("/api/oauth/revoke", {
            token: issued.body.access_token,
            client_id: w.a.clientId,
            client_secret: w.a.clientSecret,
          }),
      ),
    success: [200, (reply) => expect(reply.text).toBe("")],
    rows: [
      answers(200, "the token is unknown (RFC 7009)", (w) =>
        postForm("/api/oauth/revoke", {
          token: "pos_at_unknown",
          client_id: w.a.clientId,
          client_secret: w.a.clientSecret,
        }),
      ),
      refuse("GH1001", 401, "the client secret is wrong", (w) =>
        postForm("/api/oauth/revoke", { token: w.a.token, client_id: w.a.clientId, client_secret: "x" }),
      ),
      refuse("GH1006", 400, "no token is given", (w) =>
        postForm("/api/oauth/revoke", { client_id: w.a.clientId, client_secret: w.a.clientSecret }),
      ),
    ],
  },

  // Users.
  {
    route: "POST /api/users",
    body: "json",
    idempotent: true,
    valid: (w) => post(w.a, "/api/users", { partner_user_id: fresh("p"), email: "grace@example.com" }),
    success: [201, (reply) => expect(reply.body.status).toBe("processing")],
    rows: [
      refuse(
        "GH1006",
        400,
        "fields are invalid (each one reported)",
        (w) => post(w.a, "/api/users", { email: 7 }),
        (reply) =>
          expect(reply.body.errors.map((entry: { message: string }) => entry.message).sort()).toEqual([
            "email must be a string",
            "partner_user_id is required",
          ]),
      ),
      refuse("GH1006", 400, "the email is over 320 characters", (w) =>
        post(w.a, "/api/users", { partner_user_id: fresh("p"), email: `${"e".repeat(320)}@example.com` }),
      ),
    ],
  },
  {
    route: "GET /api/users",
    valid: (w) => get(w.a, "/api/users?limit=2"),
    success: [200, (reply) => expect(reply.body.data).toHaveLength(2)],
    rows: [
      refuse("GH1006", 400, "limit is 0", (w) => get(w.a, "/api/users?limit=0")),
      refuse("GH1006", 400, "the cursor is not one", (w) => get(w.a, "/api/users?cursor=bogus")),
    ],
  },
  {
    route: "GET /api/users/{user_id}",
    valid: (w) => get(w.a, `/api/users/${w.funded}`),
    success: [200, (reply, w) => expect(reply.body.id).toBe(w.funded)],
    rows: [
      answers(
        200,
        "the user is processing (reads always answer)",
        (w) => get(w.a, `/api/users/${w.processing}`),
        (reply) => expect(reply.body.status).toBe("processing"),
      ),
      refuse(
        "LE0002",
        404,
        "the user is another partner's",
        (w) => get(w.a, `/api/users/${w.userOfB}`),
        firstMessage("user not found"),
      ),
      refuse("LE0002", 404, "no user has the id", (w) => get(w.a, `/api/users/${unknownId}`)),
      refuse("LE0002", 404, "the id is not a UUID", (w) => get(w.a, "/api/users/not-an-id")),
    ],
  },
  {
    route: "PATCH /api/users/{user_id}",
    body: "json",
    valid: (w) => patch(w.a, `/api/users/${w.funded}`, { name: fresh("Ada") }),
    success: [200, (reply) => expect(reply.body.name).toMatch(/^Ada-/)],
    rows: [
      refuse("GH1006", 400, "the email is not a string", (w) =>
        patch(w.a, `/api/users/${w.funded}`, { email: 5 }),
      ),
      refuse("LE0002", 404, "the user is another partner's", (w) =>
        patch(w.a, `/api/users/${w.userOfB}`, { name: "x" }),
      ),
      refuse("LE0001", 409, "the user is processing", (w) =>
        patch(w.a, `/api/users/${w.processing}`, { name: "x" }),
      ),
      refuse("LE0004", 409, "the user is closed", (w) => patch(w.a, `/api/users/${w.closed}`, { name: "x" })),
    ],
  },
  {
    route: "DELETE /api/users/{user_id}",
    valid: (w) => del(w.a, `/api/users/${w.spare()}`),
    success: [200, (reply) => expect(reply.body.status).toBe("closed")],
    rows: [
      refuse("LE0002", 404, "the user is another partner's", (w) => del(w.a, `/api/users/${w.userOfB}`)),
      refuse("LE0001", 409, "the user is processing", (w) => del(w.a, `/api/users/${w.processing}`)),
      refuse("LE0004", 409, "the user is closed already (a repeat)", (w) =>
        del(w.a, `/api/users/${w.closed}`),
      ),
    ],
  },
  {
    route: "POST /api/users/{user_id}/points-account",
    idempotent: true,
    valid: (w) => post(w.a, `/api/users/${w.spare()}/points-account`),
    success: [201, (reply) => expect(reply.body.balance).toBe(0)],
    rows: [
      refuse("LE1001", 409, "the user has an account already", (w) =>
        post(w.a, `/api/users/${w.funded}/points-account`),
      ),
      refuse("LE0002", 404, "the user is another partner's", (w) =>
        post(w.a, `/api/users/${w.userOfB}/points-account`),
      ),
      refuse("LE0001", 409, "the user is processing", (w) =>
        post(w.a, `/api/users/${w.processing}/points-account`),
      ),
      refuse("LE0004", 409, "the user is closed", (w) => post(w.a, `/api/users/${w.closed}/points-account`)),
    ],
  },
  {
    route: "GET /api/users/{user_id}/points-account",
    valid: (w) => get(w.a, `/api/users/${w.funded}/points-account`),
    success: [200, (reply, w) => expect(reply.body.user_id).toBe(w.funded)],
    rows: [
      refuse(
        "LE0002",
        404,
        "the user has no account",
        (w) => get(w.a, `/api/users/${w.noAccount}/points-account`),
        firstMessage("points account not found"),
      ),
      refuse(
        "LE0002",
        404,
        "the user is another partner's",
        (w) => get(w.a, `/api/users/${w.userOfB}/points-account`),
        firstMessage("user not found"),
      ),
    ],
  },

  // Points.
  {
    route: "POST /api/points/add",
    body: "json",
    idempotent: true,
    valid: (w) => post(w.a, "/api/points/add", move(w.funded, 1)),
    success: [201, (reply) => expect(reply.body).toMatchObject({ type: "add", amount: 1 })],
    rows: [
      refuse("GH1006", 400, "the amount is 0", (w) => post(w.a, "/api/points/add", move(w.funded, 0))),
      refuse("GH1006", 400, "the amount is over 1,000,000,000", (w) =>
        post(w.a, "/api/points/add", move(w.funded, 1_000_000_001)),
      ),
      refuse(
        "LE1001",
        400,
        "transaction.user_id is not a string",
        (w) => post(w.a, "/api/points/add", move(5, 1)),
        firstMessage("transaction.user_id must be a string"),
      ),
      refuse("LE0002", 404, "the user is another partner's", (w) =>
        post(w.a, "/api/points/add", move(w.userOfB, 1)),
      ),
      refuse("LE0002", 404, "no user has the id", (w) => post(w.a, "/api/points/add", move(unknownId, 1))),
      refuse("LE0001", 409, "the user is processing", (w) =>
        post(w.a, "/api/points/add", move(w.processing, 1)),
      ),
      refuse("LE0004", 409, "the user is closed", (w) => post(w.a, "/api/points/add", move(w.closed, 1))),
      refuse("LE0006", 409, "the reference id is another transaction's", (w) =>
        post(w.a, "/api/points/add", move(w.funded, 1, "fixture-funding")),
      ),
    ],
  },
  {
    route: "POST /api/points/subtract",
    body: "json",
    idempotent: true,
    valid: (w) => post(w.a, "/api/points/subtract", move(w.funded, 1)),
    success: [201, (reply) => expect(reply.body).toMatchObject({ type: "subtract", amount: 1 })],
    rows: [
      refuse("GH1006", 400, "the amount is negative", (w) =>
        post(w.a, "/api/points/subtract", move(w.funded, -1)),
      ),
      refuse("LE1001", 400, "transaction.user_id is not a string", (w) =>
        post(w.a, "/api/points/subtract", move(null, 1)),
      ),
      refuse("LE0002", 404, "the user is another partner's", (w) =>
        post(w.a, "/api/points/subtract", move(w.userOfB, 1)),
      ),
      refuse("LE0001", 409, "the user is processing", (w) =>
        post(w.a, "/api/points/subtract", move(w.processing, 1)),
      ),
      refuse("LE2001", 422, "the user has no account", (w) =>
        post(w.a, "/api/points/subtract", move(w.noAccount, 1)),
      ),
      refuse("LE2001", 422, "the user's account closed with the user", (w) =>
        post(w.a, "/api/points/subtract", move(w.closed, 1)),
      ),
      refuse("LE2002", 422, "the balance is too low", (w) =>
        post(w.a, "/api/points/subtract", move(w.funded, 1_000_000_000)),
      ),
      refuse("LE0006", 409, "the reference id is another transaction's", (w) =>
        post(w.a, "/api/points/subtract", move(w.funded, 1, "fixture-funding")),
      ),
    ],
  },
  {
    route: "GET /api/points/transactions/{transaction_id}",
    valid: (w) => get(w.a, `/api/points/transactions/${w.transactionOfA}`),
    success: [200, (reply, w) => expect(reply.body.id).toBe(w.transactionOfA)],
    rows: [
      refuse("LE0002", 404, "the transaction is another partner's", (w) =>
        get(w.a, `/api/points/transactions/${w.transactionOfB}`),
      ),
      refuse("LE0002", 404, "the id is not a UUID", (w) => get(w.a, "/api/points/transactions/42")),
    ],
  },
  {
    route: "GET /api/points/transactions",
    valid: (w) => get(w.a, "/api/points/transactions?reference_id=fixture-funding"),
    success: [
      200,
      (reply, w) => expect(reply.body.data.map((t: { id: string }) => t.id)).toEqual([w.transactionOfA]),
    ],
    rows: [
      refuse("GH1006", 400, "limit is 101", (w) => get(w.a, "/api/points/transactions?limit=101")),
      refuse("GH1006", 400, "the cursor is not one", (w) =>
        get(w.a, "/api/points/transactions?cursor=bogus"),
      ),
    ],
  },

  // Orders.
  {
    route: "POST /api/orders",
    body: "json",
    idempotent: true,
    valid: (w) => placeOrder(w, w.funded),
    success: [201, (reply) => expect(reply.body).toMatchObject({ status: "pending", total_points: 10 })],
    rows: [
      refuse("IK1003", 400, "there is no Idempotency-Key", (w) => post(w.a, "/api/orders", order(w.funded))),
      refuse("GH1006", 400, "the Idempotency-Key is empty", (w) =>
        post(w.a, "/api/orders", order(w.funded), { "idempotency-key": '""' }),
      ),
      refuse("GH1006", 400, "there are no items", (w) => placeOrder(w, w.funded, [])),
      refuse("GH1006", 400, "a quantity is over 1000", (w) =>
        placeOrder(w, w.funded, [{ sku: "MUG", quantity: 1001, points: 1 }]),
      ),
      refuse("LE0002", 404, "the user is another partner's", (w) => placeOrder(w, w.userOfB)),
      refuse("LE0001", 409, "the user is processing", (w) => placeOrder(w, w.processing)),
      refuse("LE2001", 422, "the user has no account", (w) => placeOrder(w, w.noAccount)),
      refuse("LE2001", 422, "the user's account closed with the user", (w) => placeOrder(w, w.closed)),
      refuse("LE2002", 422, "the balance is too low", (w) => placeOrder(w, w.funded, [item(1_000_000_000)])),
      refuse("LE0006", 409, "the reference id is another order's", (w) =>
        post(w.a, "/api/orders", { ...order(w.funded), reference_id: "fixture-order" }, keyed()),
      ),
    ],
  },
  {
    route: "GET /api/orders/{order_id}",
    valid: (w) => get(w.a, `/api/orders/${w.orderOfA}`),
    success: [200, (reply, w) => expect(reply.body.id).toBe(w.orderOfA)],
    rows: [
      refuse("LE0002", 404, "the order is another partner's", (w) => get(w.a, `/api/orders/${w.orderOfB}`)),
      refuse("LE0002", 404, "no order has the id", (w) => get(w.a, `/api/orders/${unknownId}`)),
    ],
  },
  {
    route: "GET /api/orders",
    valid: (w) => get(w.a, "/api/orders?reference_id=fixture-order"),
    success: [
      200,
      (reply, w) => expect(reply.body.data.map((o: { id: string }) => o.id)).toEqual([w.orderOfA]),
    ],
    rows: [
      refuse("GH1006", 400, "the status is none of the statuses", (w) =>
        get(w.a, "/api/orders?status=shipped"),
      ),
      refuse("GH1006", 400, "limit is not a number", (w) => get(w.a, "/api/orders?limit=many")),
    ],
  },
  {
    route: "POST /api/orders/{order_id}/cancel",
    idempotent: true,
    valid: (w) => Effect.map(newOrderOfA(w), (id) => post(w.a, `/api/orders/${id}/cancel`)),
    success: [200, (reply) => expect(reply.body.status).toBe("cancelled")],
    rows: [
      refuse("LE3001", 409, "the order is no longer pending (cancelled)", (w) =>
        Effect.flatMap(newOrderOfA(w), (id) => repeated(post(w.a, `/api/orders/${id}/cancel`))),
      ),
      refuse("LE0002", 404, "the order is another partner's", (w) =>
        post(w.a, `/api/orders/${w.orderOfB}/cancel`),
      ),
      refuse("LE0002", 404, "the id is not a UUID", (w) => post(w.a, "/api/orders/nope/cancel")),
    ],
  },

  // Webhook endpoints and deliveries.
  {
    route: "POST /api/webhooks/endpoints",
    body: "json",
    idempotent: true,
    valid: (w) => post(w.a, hooks, { url: "https://hooks.example.com/new" }),
    success: [201, (reply) => expect(reply.body.secret).toMatch(/^whsec_/)],
    rows: [
      refuse(
        "GH1006",
        400,
        "the target is a loopback address",
        (w) => post(w.a, hooks, { url: "https://127.0.0.1/hook" }),
        (reply) => expect(reply.body.errors[0].message).toContain("url"),
      ),
      refuse("GH1006", 400, "there is no url", (w) => post(w.a, hooks, { event_types: ["points.added"] })),
      refuse(
        "LE0007",
        409,
        "the partner has 20 endpoints already",
        () =>
          Effect.gen(function* () {
            const full = yield* newPartner("Full")
            for (let n = 0; n < 20; n++) {
              const made = yield* send(post(full, hooks, { url: `https://hooks.example.com/${n}` }))
              expect(made.status, made.text).toBe(201)
            }
            return post(full, hooks, { url: "https://hooks.example.com/one-more" })
          }),
        (reply) =>
          expect(reply.body.errors[0].message).toBe(
            "limit reached: a partner has at most 20 webhook endpoints",
          ),
      ),
    ],
  },
  {
    route: "GET /api/webhooks/endpoints",
    valid: (w) => get(w.a, hooks),
    success: [200, (reply) => expect(reply.body.data.length).toBeGreaterThan(0)],
    rows: [refuse("GH1006", 400, "limit is 0", (w) => get(w.a, `${hooks}?limit=0`))],
  },
  {
    route: "GET /api/webhooks/endpoints/{endpoint_id}",
    valid: (w) => get(w.a, `${hooks}/${w.endpointOfA}`),
    success: [200, (reply) => expect(reply.body.secret).toBeUndefined()],
    rows: [
      refuse("LE0002", 404, "the endpoint is another partner's", (w) =>
        get(w.a, `${hooks}/${w.endpointOfB}`),
      ),
    ],
  },
  {
    route: "PATCH /api/webhooks/endpoints/{endpoint_id}",
    body: "json",
    valid: (w) => patch(w.a, `${hooks}/${w.endpointOfA}`, { description: fresh("d") }),
    success: [200, (reply) => expect(reply.body.description).toMatch(/^d-/)],
    rows: [
      refuse("GH1006", 400, "the url is not http(s)", (w) =>
        patch(w.a, `${hooks}/${w.endpointOfA}`, { url: "ftp://example.com" }),
      ),
      refuse("LE0002", 404, "the endpoint is another partner's", (w) =>
        patch(w.a, `${hooks}/${w.endpointOfB}`, { enabled: false }),
      ),
    ],
  },
  {
    route: "DELETE /api/webhooks/endpoints/{endpoint_id}",
    valid: (w) => Effect.map(newEndpointOfA(w), (id) => del(w.a, `${hooks}/${id}`)),
    success: [200, (reply) => expect(reply.body.url).toBe("https://hooks.example.com/more")],
    rows: [
      refuse("LE0002", 404, "the endpoint is another partner's", (w) =>
        del(w.a, `${hooks}/${w.endpointOfB}`),
      ),
      refuse("LE0002", 404, "the endpoint was deleted (a repeat)", (w) =>
        Effect.flatMap(newEndpointOfA(w), (id) => repeated(del(w.a, `${hooks}/${id}`))),
      ),
    ],
  },
  {
    route: "POST /api/webhooks/endpoints/{endpoint_id}/rotate-secret",
    idempotent: true,
    valid: (w) => post(w.a, `${hooks}/${w.endpointOfA}/rotate-secret`),
    success: [200, (reply) => expect(reply.body.secret).toMatch(/^whsec_/)],
    rows: [
      refuse("LE0002", 404, "the endpoint is another partner's", (w) =>
        post(w.a, `${hooks}/${w.endpointOfB}/rotate-secret`),
      ),
    ],
  },
  {
    route: "GET /api/webhooks/endpoints/{endpoint_id}/deliveries",
    valid: (w) => get(w.a, `${hooks}/${w.endpointOfA}/deliveries`),
    success: [200, (reply) => expect(Array.isArray(reply.body.data)).toBe(true)],
    rows: [
      refuse("GH1006", 400, "limit is 0", (w) => get(w.a, `${hooks}/${w.endpointOfA}/deliveries?limit=0`)),
      refuse("LE0002", 404, "the endpoint is another partner's", (w) =>
        get(w.a, `${hooks}/${w.endpointOfB}/deliveries`),
      ),
    ],
  },
  {
    route: "POST /api/webhooks/endpoints/{endpoint_id}/replay",
    body: "json",
    idempotent: true,
    valid: (w) => post(w.a, `${hooks}/${w.endpointOfA}/replay`, { event_ids: [w.eventOfA] }),
    success: [202, (reply) => expect(reply.body).toEqual({ replayed: 1 })],
    rows: [
      refuse("GH1006", 400, "nothing is selected", (w) => post(w.a, `${hooks}/${w.endpointOfA}/replay`, {})),
      refuse("GH1006", 400, "since is not a timestamp", (w) =>
        post(w.a, `${hooks}/${w.endpointOfA}/replay`, { since: "yesterday" }),
      ),
      refuse("LE0002", 404, "the endpoint is another partner's", (w) =>
        post(w.a, `${hooks}/${w.endpointOfB}/replay`, { event_ids: [w.eventOfA] }),
      ),
      refuse("LE0002", 404, "an event is another partner's", (w) =>
        post(w.a, `${hooks}/${w.endpointOfA}/replay`, { event_ids: [w.eventOfA, w.eventOfB] }),
      ),
      refuse(
        "LE0008",
        409,
        "the endpoint is disabled",
        (w) =>
          Effect.gen(function* () {
            const id = yield* newEndpointOfA(w)
            const disabled = yield* send(patch(w.a, `${hooks}/${id}`, { enabled: false }))
            expect(disabled.status, disabled.text).toBe(200)
            return post(w.a, `${hooks}/${id}/replay`, { event_ids: [w.eventOfA] })
          }),
        (reply) =>
          expect(reply.body.errors[0].message).toBe(
            'webhook endpoint is disabled: enable it with PATCH {"enabled": true} before replaying',
          ),
      ),
    ],
  },

  // Events.
  {
    route: "GET /api/events",
    valid: (w) => get(w.a, "/api/events?type=user.created&limit=1"),
    success: [200, (reply) => expect(reply.body.data[0].type).toBe("user.created")],
    rows: [
      refuse("GH1006", 400, "the type is none of the event types", (w) =>
        get(w.a, "/api/events?type=user.updated"),
      ),
      refuse("GH1006", 400, "since is not a timestamp", (w) => get(w.a, "/api/events?since=yesterday")),
    ],
  },
  {
    route: "GET /api/events/{event_id}",
    valid: (w) => get(w.a, `/api/events/${w.eventOfA}`),
    success: [200, (reply, w) => expect(reply.body.id).toBe(w.eventOfA)],
    rows: [
      refuse("LE0002", 404, "the event is another partner's", (w) => get(w.a, `/api/events/${w.eventOfB}`)),
    ],
  },

  // Admin: partners and client credentials (Bearer ADMIN_TOKEN).
  {
    route: "POST /admin/api/partners",
    body: "json",
    valid: () => post(admin, "/admin/api/partners", { name: "Umbrella" }),
    success: [201, (reply) => expect(reply.body.name).toBe("Umbrella")],
    rows: [refuse("GH1006", 400, "there is no name", () => post(admin, "/admin/api/partners", {}))],
  },
  {
    route: "GET /admin/api/partners",
    valid: () => get(admin, "/admin/api/partners"),
    success: [200, (reply) => expect(reply.body.data.length).toBeGreaterThan(2)],
    rows: [refuse("GH1006", 400, "limit is 0", () => get(admin, "/admin/api/partners?limit=0"))],
  },
  {
    route: "GET /admin/api/partners/{partner_id}",
    valid: (w) => get(admin, `/admin/api/partners/${w.adminPartner}`),
    success: [200, (reply) => expect(reply.body.name).toBe("Initech")],
    rows: [
      refuse("LE0002", 404, "no partner has the id", () => get(admin, `/admin/api/partners/${unknownId}`)),
    ],
  },
  {
    route: "POST /admin/api/partners/{partner_id}/clients",
    body: "json",
    valid: (w) => post(admin, `/admin/api/partners/${w.adminPartner}/clients`, { name: "ci" }),
    success: [201, (reply) => expect(reply.body.client_secret).toMatch(/^pos_cs_/)],
    rows: [
      refuse("GH1006", 400, "the name is over 200 characters", (w) =>
        post(admin, `/admin/api/partners/${w.adminPartner}/clients`, { name: "n".repeat(201) }),
      ),
      refuse("LE0002", 404, "no partner has the id", () =>
        post(admin, `/admin/api/partners/${unknownId}/clients`, {}),
      ),
    ],
  },
  {
    route: "GET /admin/api/partners/{partner_id}/clients",
    valid: (w) => get(admin, `/admin/api/partners/${w.adminPartner}/clients`),
    success: [200, (reply) => expect(reply.body.data.length).toBeGreaterThan(1)],
    rows: [
      refuse("GH1006", 400, "limit is 0", (w) =>
        get(admin, `/admin/api/partners/${w.adminPartner}/clients?limit=0`),
      ),
      refuse("LE0002", 404, "no partner has the id", () =>
        get(admin, `/admin/api/partners/${unknownId}/clients`),
      ),
    ],
  },
  {
    route: "POST /admin/api/partners/{partner_id}/clients/{client_id}/rotate-secret",
    valid: (w) => post(admin, `/admin/api/partners/${w.adminPartner}/clients/${w.liveClient}/rotate-secret`),
    success: [200, (reply, w) => expect(reply.body.client_id).toBe(w.liveClient)],
    rows: [
      refuse("LE0002", 404, "no client has the id", (w) =>
        post(admin, `/admin/api/partners/${w.adminPartner}/clients/${unknownId}/rotate-secret`),
      ),
      refuse("LE0004", 409, "the client is revoked", (w) =>
        post(admin, `/admin/api/partners/${w.adminPartner}/clients/${w.revokedClient}/rotate-secret`),
      ),
    ],
  },
  {
    route: "DELETE /admin/api/partners/{partner_id}/clients/{client_id}",
    valid: (w) =>
      Effect.map(newCredential(w), (id) => del(admin, `/admin/api/partners/${w.adminPartner}/clients/${id}`)),
    success: [200, (reply) => expect(reply.body.status).toBe("revoked")],
    rows: [
      refuse("LE0002", 404, "no client has the id", (w) =>
        del(admin, `/admin/api/partners/${w.adminPartner}/clients/${unknownId}`),
      ),
      refuse("LE0004", 409, "the client is revoked already (a repeat)", (w) =>
        del(admin, `/admin/api/partners/${w.adminPartner}/clients/${w.revokedClient}`),
      ),
    ],
  },

  // Health and metrics: no authentication. (503 SV5003 of /health/ready: see the exceptions below.)
  {
    route: "GET /health/live",
    valid: () => get(anonymous, "/health/live"),
    success: [200, (reply) => expect(reply.body).toEqual({ status: "ok" })],
    rows: [],
  },
  {
    route: "GET /health/ready",
    valid: () => get(anonymous, "/health/ready"),
    success: [200, (reply) => expect(reply.body).toEqual({ status: "ok", database: "ok" })],
    rows: [],
  },
  {
    route: "GET /metrics",
    valid: () => get(anonymous, "/metrics"),
    success: [200, (reply) => expect(reply.text).toContain("# TYPE")],
    rows: [],
  },
]

/** Rows about no one endpoint: unknown routes. */
const unknownRoutes: Endpoint = {
  route: "Unknown routes",
  valid: () => get(anonymous, "/health/live"),
  success: [200, () => undefined],
  rows: [
    refuse("NN1002", 404, "an unknown path under /api", (w) => get(w.a, "/api/nothing-here")),
    refuse("NN1002", 404, "a method the path does not have (PUT /api/users)", (w) => ({
      ...post(w.a, "/api/users", {}),
      method: "PUT",
    })),
    refuse("NN1002", 404, "an unknown admin path", () => get(admin, "/admin/api/nothing-here")),
    refuse("NN1002", 404, "an unknown path, without authentication", () => post(anonymous, "/nothing-here")),
  ],
}

// SV5000: a failure of ours. A fault injected into the database fails the write of a webhook endpoint's secret;
// the answer says nothing of it, the transaction rolled back, and the key is free again for the retry.
const failureOfOurs = refuse(
  "SV5000",
  500,
  "the database refuses a write unexpectedly (an injected fault)",
  (w) => post(w.a, hooks, { url: "https://hooks.example.com/fault" }, { "idempotency-key": "fault-key" }),
)

// ---------------------------------------------------------------------------------------------------------
// The protocol rows, derived from what each endpoint is.

const withHeaders = (request: Req, headers: Record<string, string>): Req => ({
  ...request,
  headers: { ...request.headers, ...headers },
})

/** GH1003: every route under /api (but OAuth) and /admin/api refuses a bad or missing bearer token. */
const authenticationRows = (endpoint: Endpoint): ReadonlyArray<Row> =>
  endpoint.route.includes("/api/oauth/") || !endpoint.route.includes("/api/")
    ? []
    : [
        refuse(
          "GH1003",
          401,
          "the bearer token is unknown (with a Bearer challenge)",
          (w) =>
            Effect.map(build(endpoint.valid, w), (request) =>
              withHeaders(
                { ...request, as: anonymous },
                { authorization: `Bearer pos_at_${"A".repeat(43)}` },
              ),
            ),
          (reply) => expect(reply.headers.get("www-authenticate")).toContain("Bearer"),
        ),
        refuse("GH1003", 401, "there is no Authorization header", (w) =>
          Effect.map(build(endpoint.valid, w), (request) => ({ ...request, as: anonymous })),
        ),
      ]

const withBody = (request: Req, body: string, contentType: string): Req => {
  const { json: _json, ...rest } = request
  return withHeaders({ ...rest, body }, { "content-type": contentType })
}

/** GH1010 and GH1008: an endpoint that takes a body refuses another media type, and one over 1 MiB. */
const bodyRows = (endpoint: Endpoint): ReadonlyArray<Row> =>
  endpoint.body === undefined
    ? []
    : [
        refuse("GH1010", 415, "the body is text/plain", (w) =>
          Effect.map(build(endpoint.valid, w), (request) => withBody(request, "hello", "text/plain")),
        ),
        refuse("GH1008", 413, "the body is over 1 MiB", (w) =>
          Effect.map(build(endpoint.valid, w), (request) =>
            withBody(
              request,
              JSON.stringify({ padding: "x".repeat(1_100_000) }),
              endpoint.body === "form" ? "application/x-www-form-urlencoded" : "application/json",
            ),
          ),
        ),
      ]

/** IK1001 and IK1002: an idempotent POST refuses its key for another request, and while another holds it. */
const idempotencyRows = (endpoint: Endpoint): ReadonlyArray<Row> =>
  endpoint.idempotent !== true
    ? []
    : [
        refuse(
          "IK1001",
          422,
          "the key was used for another request (the body differs)",
          (w) =>
            Effect.gen(function* () {
              const key = { "idempotency-key": fresh("key") }
              const first = withHeaders(yield* build(endpoint.valid, w), key)
              yield* repeated(first)
              const json = typeof first.json === "object" && first.json !== null ? first.json : {}
              return { ...first, json: { ...json, other: "request" } }
            }),
          (reply) => expect(reply.body.errors[0].message).toContain("body differs"),
        ),
        refuse("IK1002", 409, "another request holds the key right now", (w) =>
          Effect.map(build(endpoint.valid, w), (request) => ({ ...request, heldKey: fresh("key") })),
        ),
      ]

const rowsOf = (endpoint: Endpoint): ReadonlyArray<Row> => [
  ...endpoint.rows,
  ...authenticationRows(endpoint),
  ...bodyRows(endpoint),
  ...idempotencyRows(endpoint),
]

// ---------------------------------------------------------------------------------------------------------
// Running a row.

const isWrite = (request: Req) => request.method !== "GET"

const sendHeld = (request: Req, key: string) => {
  if (typeof request.as !== "object") return Effect.dieMessage("an idempotent POST is a partner's request")
  return whileKeyHeld(
    request.as.partnerId,
    key,
    { method: request.method, path: request.path, json: request.json },
    send(withHeaders(request, { "idempotency-key": key })),
  )
}

const runRow = (endpoint: Endpoint, row: Row) =>
  Effect.gen(function* () {
    const world = yield* TheWorld
    const request = yield* build(row.request, world)
    const before = isWrite(request) ? yield* databaseDigest : ""
    const reply =
      request.heldKey === undefined ? yield* send(request) : yield* sendHeld(request, request.heldKey)
    if (row.code === null) {
      expect(reply.status, reply.text).toBe(row.status)
    } else {
      expectError(reply, row.status, row.code, endpoint.body === "form")
      // A refused write changed nothing: no event, balance, read model, token, secret or delivery.
      if (isWrite(request)) expect(yield* databaseDigest).toBe(before)
    }
    row.check?.(reply)
  })

const runSuccess = (endpoint: Endpoint) =>
  Effect.gen(function* () {
    const world = yield* TheWorld
    const reply = yield* send(yield* build(endpoint.valid, world))
    const [status, check] = endpoint.success
    expect(reply.status, reply.text).toBe(status)
    check(reply, world)
  })

const injectFault = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.zipRight(
    sql.unsafe(`CREATE FUNCTION injected_fault() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected fault in webhook_signing_secrets'; END $$`),
    sql.unsafe(`CREATE TRIGGER injected_fault BEFORE INSERT ON webhook_signing_secrets
      FOR EACH ROW EXECUTE FUNCTION injected_fault()`),
  ),
).pipe(Effect.orDie)

const removeFault = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.zipRight(
    sql.unsafe("DROP TRIGGER IF EXISTS injected_fault ON webhook_signing_secrets"),
    sql.unsafe("DROP FUNCTION IF EXISTS injected_fault()"),
  ),
).pipe(Effect.orDie)

// ---------------------------------------------------------------------------------------------------------
// Every error code of the domain has a row, or a named test elsewhere.

/** Codes no row of this table produces, each with the test file that does, and why it is there. */
const coveredElsewhere: ReadonlyArray<{ readonly code: Code; readonly file: string; readonly why: string }> =
  [
    {
      code: "GH1009",
      file: "apps/api/test/rate-limit.test.ts",
      why: "needs a small rate limit shared by two servers",
    },
    { code: "SV5003", file: "apps/api/test/operations.test.ts", why: "needs the database out of reach" },
  ]

/** Every error code the domain defines: the `code` of each of its error classes. */
const domainCodes = (): ReadonlyArray<string> =>
  Object.values(Domain as Record<string, unknown>)
    .flatMap((value) => {
      if (typeof value !== "function") return []
      const code = Object.getOwnPropertyDescriptor(value.prototype ?? {}, "code")?.get?.call({})
      return typeof code === "string" ? [code] : []
    })
    .sort()

const tableCodes = new Set<string>(
  [...endpoints.flatMap(rowsOf), ...unknownRoutes.rows, failureOfOurs].flatMap((row) =>
    row.code === null ? [] : [row.code],
  ),
)

plain(
  "every error code of the domain is produced by a row of the table, or by a named test elsewhere",
  () => {
    const codes = domainCodes()
    expect(codes).toEqual([...Domain.ErrorCode.literals].sort())
    for (const { code, file } of coveredElsewhere) {
      expect(tableCodes.has(code), `${code} is in the table: drop it from the exceptions`).toBe(false)
      const path = new URL(`../../../${file}`, import.meta.url)
      expect(existsSync(path), file).toBe(true)
      expect(readFileSync(path, "utf8"), file).toContain(code)
    }
    const exceptions = new Set<string>(coveredElsewhere.map((entry) => entry.code))
    expect(codes.filter((code) => !tableCodes.has(code) && !exceptions.has(code))).toEqual([])
  },
)

plain("the table has a success row and a GH1003 row for every endpoint of the contract", () => {
  expect(endpoints).toHaveLength(37)
  for (const endpoint of endpoints) {
    const codes = rowsOf(endpoint).map((row) => row.code)
    if (endpoint.route.includes("/api/") && !endpoint.route.includes("/oauth/"))
      expect(codes).toContain("GH1003")
  }
})

// ---------------------------------------------------------------------------------------------------------
// The published document lists, for each operation and status, exactly the codes this table proves it gives.

/**
 * Codes every route of a kind gives that no row of the table makes it give, each with the test that proves it:
 * refusals made before any route runs (whatever the path) and failures of ours.
 */
const givenByEveryRoute: ReadonlyArray<{
  readonly status: number
  readonly code: Code
  readonly routes: (route: string) => boolean
  readonly file: string
  readonly why: string
}> = [
  {
    status: 400,
    code: "GH1006",
    routes: () => true,
    file: "apps/api/test/protocol.test.ts",
    why: "a query string that is not UTF-8, or two Authorization headers, refused before routing",
  },
  {
    status: 404,
    code: "NN1002",
    routes: () => true,
    file: "apps/api/test/protocol.test.ts",
    why: "a path with `;` or an empty segment names no route, though it looks like one's",
  },
  {
    status: 413,
    code: "GH1008",
    routes: () => true,
    file: "apps/api/test/protocol.test.ts",
    why: "a Content-Length over 1 MiB is refused before routing, on a route that takes no body too",
  },
  {
    status: 429,
    code: "GH1009",
    routes: (route) => route.includes(" /api/"),
    file: "apps/api/test/rate-limit.test.ts",
    why: "partners' requests and the token endpoints are rate-limited, the health checks not",
  },
  {
    status: 429,
    code: "GH1009",
    routes: (route) => route.includes(" /admin/api/"),
    file: "apps/api/test/failed-authentications.test.ts",
    why: "a network that sent wrong admin tokens too often gets none compared for a while",
  },
  {
    status: 500,
    code: "SV5000",
    routes: () => true,
    file: "apps/api/test/database-unreachable.test.ts",
    why: "any route can fail unexpectedly (a row below makes one)",
  },
  {
    status: 503,
    code: "SV5003",
    routes: () => true,
    file: "apps/api/test/operations.test.ts",
    why: "any route can find the database out of reach",
  },
]

type CodesByStatus = Record<string, ReadonlyArray<string>>

const sortedByStatus = (pairs: ReadonlyArray<readonly [number | string, string]>): CodesByStatus => {
  const byStatus: Record<string, Set<string>> = {}
  for (const [status, code] of pairs) {
    byStatus[String(status)] ??= new Set()
    byStatus[String(status)]?.add(code)
  }
  return Object.fromEntries(Object.entries(byStatus).map(([status, codes]) => [status, [...codes].sort()]))
}

/** The codes the published document lists for the route's operation, by error status. */
const documentedCodes = (route: string): CodesByStatus => {
  const [method = "", path = ""] = route.split(" ")
  const paths = publishedDocument.paths as Record<
    string,
    Record<string, { responses: Record<string, unknown> }>
  >
  const operation = paths[path]?.[method.toLowerCase()]
  expect(operation, `${route} is in the document`).toBeDefined()
  return sortedByStatus(
    Object.entries(operation?.responses ?? {}).flatMap(
      ([status, response]) =>
        (
          (response as Record<string, unknown>)[ERROR_CODES_EXTENSION] as ReadonlyArray<string> | undefined
        )?.map((code) => [status, code] as const) ?? [],
    ),
  )
}

/** The codes the table proves the route gives (its rows and those of its kind), and those every route gives. */
const provenCodes = (endpoint: Endpoint): CodesByStatus =>
  sortedByStatus([
    ...rowsOf(endpoint).flatMap((row) => (row.code === null ? [] : [[row.status, row.code] as const])),
    ...givenByEveryRoute.flatMap((given) =>
      given.routes(endpoint.route) ? [[given.status, given.code] as const] : [],
    ),
  ])

plain("the published document lists, per operation and status, exactly the codes the table proves", () => {
  for (const { code, file } of givenByEveryRoute) {
    const path = new URL(`../../../${file}`, import.meta.url)
    expect(readFileSync(path, "utf8"), file).toContain(code)
  }
  // One comparison of every route, so that a failure shows each route that differs.
  expect(
    Object.fromEntries(endpoints.map((endpoint) => [endpoint.route, documentedCodes(endpoint.route)])),
  ).toEqual(Object.fromEntries(endpoints.map((endpoint) => [endpoint.route, provenCodes(endpoint)])))
})

layer(errorCodesServer, { timeout: "120 seconds", excludeTestServices: true })(
  "Every endpoint's success and error codes, over HTTP",
  (it) => {
    for (const endpoint of [...endpoints, unknownRoutes]) {
      describe(endpoint.route, () => {
        if (endpoint !== unknownRoutes) {
          it.effect(`${endpoint.success[0]} on success`, () => runSuccess(endpoint))
        }
        for (const row of rowsOf(endpoint)) {
          it.effect(`${row.status} ${row.code ?? "too"} when ${row.when}`, () => runRow(endpoint, row))
        }
      })
    }
    describe("A failure of ours", () => {
      it.effect(`500 SV5000 when ${failureOfOurs.when}; the key is free for the retry`, () =>
        Effect.gen(function* () {
          const webhookCreate = endpoints.find((endpoint) => endpoint.route === `POST ${hooks}`)
          if (webhookCreate === undefined) return yield* Effect.dieMessage("no webhook endpoint row")
          yield* Effect.acquireUseRelease(
            injectFault,
            () => runRow(webhookCreate, failureOfOurs),
            () => removeFault,
          )
          const retry = yield* send(yield* build(failureOfOurs.request, yield* TheWorld))
          expect(retry.status, retry.text).toBe(201)
          expect(retry.headers.get("idempotent-replayed")).toBeNull()
        }),
      )
    })
  },
)

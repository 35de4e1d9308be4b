import { createHash } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { IdempotencyKey, PartnerId } from "@points/domain"
import { claimKey, releaseKey } from "@points/infrastructure"
import { Context, Effect, Layer, Option } from "effect"
import {
  ADMIN_TOKEN,
  activeUser,
  call,
  eventually,
  newPartner,
  testServerWithoutActivation,
  withActivation,
} from "./harness.js"

// The world the error-code table runs in, made once per file: two partners, users in every standing, an order,
// a transaction, a webhook endpoint and an event of each partner, and credentials to break.

/** A partner as `newPartner` made it. */
export type Partner = Effect.Effect.Success<ReturnType<typeof newPartner>>

/** Everything the rows of the table refer to. */
export interface World {
  readonly a: Partner
  readonly b: Partner
  /** A's users: active with 1000 points, active without an account, closed (with its account), processing. */
  readonly funded: string
  readonly noAccount: string
  readonly closed: string
  readonly processing: string
  /** Active users of A without an account, each for one row that changes it (open an account, close). */
  readonly spare: () => string
  readonly transactionOfA: string
  readonly orderOfA: string
  readonly endpointOfA: string
  readonly eventOfA: string
  readonly userOfB: string
  readonly transactionOfB: string
  readonly orderOfB: string
  readonly endpointOfB: string
  readonly eventOfB: string
  /** A partner only the admin API touches, with a live and a revoked client credential. */
  readonly adminPartner: string
  readonly liveClient: string
  readonly revokedClient: string
}

/** The world of the error-code table. */
export class TheWorld extends Context.Tag("error-codes/World")<TheWorld, World>() {}

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

const SPARE_USERS = 10

const created = (token: string) =>
  Effect.map(
    call("POST", "/api/users", {
      token,
      json: { partner_user_id: `p-${Math.random().toString(36).slice(2)}`, email: "ada@example.com" },
    }),
    (reply) => reply.body.id as string,
  )

const addPoints = (token: string, userId: string, amount: number, reference: string) =>
  Effect.map(
    call("POST", "/api/points/add", {
      token,
      json: { transaction: { user_id: userId, amount, reference_id: reference } },
    }),
    (reply) => reply.body.id as string,
  )

const placeOrder = (token: string, userId: string, reference: string) =>
  Effect.map(
    call("POST", "/api/orders", {
      token,
      headers: { "idempotency-key": reference },
      json: { user_id: userId, reference_id: reference, items: [{ sku: "MUG", quantity: 1, points: 10 }] },
    }),
    (reply) => reply.body.id as string,
  )

const newEndpoint = (token: string) =>
  Effect.map(
    call("POST", "/api/webhooks/endpoints", { token, json: { url: "https://hooks.example.com/points" } }),
    (reply) => reply.body.id as string,
  )

const firstEvent = (token: string) =>
  Effect.map(call("GET", "/api/events", { token }), (reply) => reply.body.data[0].id as string)

const world = Effect.gen(function* () {
  const a = yield* newPartner("Acme")
  const b = yield* newPartner("Globex")
  // Every active user is made in one activation run; the processing ones after it, so that none activates them.
  const [funded, noAccount, closed, userOfB, ...spares] = yield* withActivation(
    Effect.all(
      [a.token, a.token, a.token, b.token, ...Array.from({ length: SPARE_USERS }, () => a.token)].map(
        (token) => activeUser(token),
      ),
      { concurrency: "unbounded" },
    ),
  )
  if (funded === undefined || noAccount === undefined || closed === undefined || userOfB === undefined) {
    return yield* Effect.dieMessage("the fixture users were not made")
  }
  const transactionOfA = yield* addPoints(a.token, funded, 1000, "fixture-funding")
  yield* addPoints(a.token, closed, 5, "fixture-closed")
  yield* call("DELETE", `/api/users/${closed}`, { token: a.token })
  const transactionOfB = yield* addPoints(b.token, userOfB, 1000, "fixture-funding")
  const orderOfA = yield* placeOrder(a.token, funded, "fixture-order")
  const orderOfB = yield* placeOrder(b.token, userOfB, "fixture-order")
  const processing = yield* created(a.token)
  const processingOfB = yield* created(b.token)
  void processingOfB

  const adminPartner = (yield* call("POST", "/admin/api/partners", {
    json: { name: "Initech" },
    headers: admin,
  })).body.id as string
  const credential = () =>
    Effect.map(
      call("POST", `/admin/api/partners/${adminPartner}/clients`, { json: {}, headers: admin }),
      (reply) => reply.body.client_id as string,
    )
  const liveClient = yield* credential()
  const revokedClient = yield* credential()
  yield* call("DELETE", `/admin/api/partners/${adminPartner}/clients/${revokedClient}`, { headers: admin })

  let next = 0
  return TheWorld.of({
    a,
    b,
    funded,
    noAccount,
    closed,
    processing,
    spare: () => {
      const user = spares[next++]
      if (user === undefined) throw new Error(`more than ${SPARE_USERS} spare users asked for`)
      return user
    },
    transactionOfA,
    orderOfA,
    endpointOfA: yield* newEndpoint(a.token),
    eventOfA: yield* firstEvent(a.token),
    userOfB,
    transactionOfB,
    orderOfB,
    endpointOfB: yield* newEndpoint(b.token),
    eventOfB: yield* firstEvent(b.token),
    adminPartner,
    liveClient,
    revokedClient,
  })
})

/**
 * The API on a fresh database (users stay `processing` until activated), with the world made in it. The rate
 * limit is lifted: one partner sends every row's requests within seconds.
 */
export const errorCodesServer = Layer.effect(TheWorld, world).pipe(
  Layer.provideMerge(testServerWithoutActivation({ rateLimitPerSecond: 100_000, rateLimitBurst: 100_000 })),
)

/** Waits until the user is active (for rows that wait on activation). */
export const isActive = (token: string, userId: string) =>
  eventually(call("GET", `/api/users/${userId}`, { token }), (reply) => reply.body?.status === "active")

// Tables a request that failed must not have changed. Idempotency keys (a recorded refusal), rate-limit
// buckets and consumer checkpoints change by design.
const watchedTables = [
  "events",
  "streams",
  "public_events",
  "users",
  "points_accounts",
  "points_transactions",
  "orders",
  "fulfilment_jobs",
  "webhook_endpoints",
  "webhook_signing_secrets",
  "webhook_deliveries",
  "partners",
  "client_credentials",
  "access_tokens",
]

/** A digest of every business table of the database: equal before and after a request that changed nothing. */
export const databaseDigest = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    Effect.forEach(watchedTables, (table) =>
      Effect.map(
        sql.unsafe<{ digest: string }>(
          `SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest FROM ${table} t`,
        ),
        (rows) => `${table}:${rows[0]?.digest}`,
      ),
    ),
    (digests) => digests.join("\n"),
  ),
).pipe(Effect.orDie)

// JSON with sorted keys: the server fingerprints a body as this canonical form (DESIGN.md section 4).
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value as Record<string, unknown>).sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/**
 * Runs `effect` while another request holds the partner's key for exactly this request (its claim taken as
 * the server takes it, lease not run out): what a second request sees while the first one executes.
 */
export const whileKeyHeld = <A, E, R>(
  partnerId: string,
  key: string,
  request: { readonly method: string; readonly path: string; readonly json?: unknown },
  effect: Effect.Effect<A, E, R>,
) =>
  Effect.gen(function* () {
    const value = Option.getOrThrow(
      yield* IdempotencyKey.parseIdempotencyKeyHeader(key, { required: true }).pipe(Effect.orDie),
    )
    const body = request.json === undefined ? "" : canonical(request.json)
    const fingerprint = IdempotencyKey.RequestFingerprint.make({
      method: request.method,
      path: request.path,
      bodySha256: createHash("sha256").update(body).digest("hex"),
    })
    const partner = PartnerId.make(partnerId)
    const claim = yield* claimKey({
      partnerId: partner,
      key: value,
      fingerprint,
      leaseSeconds: 300,
      lifetimeSeconds: 3600,
    }).pipe(Effect.orDie)
    if (claim._tag !== "Execute") return yield* Effect.dieMessage("the key was already used")
    return yield* Effect.ensuring(
      effect,
      releaseKey({ partnerId: partner, key: value, claimToken: claim.claimToken }).pipe(Effect.ignore),
    )
  })

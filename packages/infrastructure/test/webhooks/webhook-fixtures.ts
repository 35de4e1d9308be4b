import { randomBytes } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { SqlClient } from "@effect/sql"
import { PartnerId, SigningSecretId, WebhookEndpoint, WebhookEndpointId } from "@points/domain"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { Webhook } from "standardwebhooks"
import {
  InlineProjectionLive,
  LogListener,
  LogNotifier,
  lockStreams,
  runUnitOfWork,
  webhookStream,
} from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { appendEvents } from "../consumers/consumer-fixtures.js"
import { contextFor, newId } from "../fixtures.js"

/** A fresh database with the read models, the log notifier and listener: what fan-out and dispatch need. */
export const webhookDatabase = (poolSize = 20) =>
  Layer.provideMerge(
    Layer.mergeAll(InlineProjectionLive, LogNotifier.layer, LogListener.layer),
    testDatabase({ poolSize }),
  )

/** A signing secret as the platform makes them: `whsec_` and 24 random bytes in base64. */
export const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`

const endpointUnitOfWork = (
  partnerId: string,
  endpointId: string,
  command: WebhookEndpoint.WebhookEndpointCommand,
) =>
  runUnitOfWork(
    { endpoint: webhookStream(endpointId) },
    (s) => Effect.map(WebhookEndpoint.decide(command, s.endpoint), (events) => ({ endpoint: events })),
    contextFor(partnerId),
  )

const storeSecret = (partnerId: string, endpointId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = newId()
    const secret = newSecret()
    yield* sql`
      INSERT INTO webhook_signing_secrets (id, partner_id, endpoint_id, secret)
      VALUES (${id}, ${partnerId}, ${endpointId}, ${secret})`
    return { id: SigningSecretId.make(id), secret }
  })

/** Registers an endpoint of the partner through its stream, with its signing secret (stand-in for the API). */
export const createEndpoint = (
  partnerId: string,
  options: { readonly url: string; readonly eventTypes?: ReadonlyArray<WebhookEndpoint.PublicEventType> },
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const endpointId = WebhookEndpointId.make(newId())
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        const secret = yield* storeSecret(partnerId, endpointId)
        yield* endpointUnitOfWork(
          partnerId,
          endpointId,
          WebhookEndpoint.CreateEndpoint.make({
            endpointId,
            partnerId: PartnerId.make(partnerId),
            url: Schema.decodeSync(WebhookEndpoint.WebhookUrl)(options.url),
            eventTypes: options.eventTypes ?? [],
            description: null,
            enabled: true,
            secretId: secret.id,
            allowPrivateTargets: true,
            // Made directly, not through the service that counts a partner's endpoints.
            endpointsOfPartner: 0,
          }),
        )
        return { endpointId: endpointId as string, secret: secret.secret }
      }),
    )
  })

/** Gives an endpoint a new secret; the old one signs for 24 more hours. Returns the new secret. */
export const rotateSecret = (partnerId: string, endpointId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const secret = yield* storeSecret(partnerId, endpointId)
        yield* endpointUnitOfWork(
          partnerId,
          endpointId,
          WebhookEndpoint.RotateEndpointSecret.make({
            endpointId: WebhookEndpointId.make(endpointId),
            secretId: secret.id,
            gracePeriodSeconds: 86_400,
          }),
        )
        return secret.secret
      }),
    ),
  )

/** Deletes an endpoint through its stream. */
export const deleteEndpoint = (partnerId: string, endpointId: string) =>
  endpointUnitOfWork(
    partnerId,
    endpointId,
    WebhookEndpoint.DeleteEndpoint.make({ endpointId: WebhookEndpointId.make(endpointId) }),
  )

/** A resource as its GET would answer it, of the kind a public event of `type` carries. */
export const sampleDataFor = (type: WebhookEndpoint.PublicEventType): Record<string, unknown> => {
  const at = "2025-03-01T10:00:00.000Z"
  if (type.startsWith("user.")) {
    return {
      id: newId(),
      partner_user_id: "u-1",
      email: "one@example.com",
      name: null,
      status: type === "user.created" ? "processing" : type === "user.activated" ? "active" : "closed",
      points_account_id: null,
      created_at: at,
      updated_at: at,
      version: 1,
    }
  }
  if (type.startsWith("points.")) {
    return {
      id: newId(),
      account_id: newId(),
      user_id: newId(),
      type: type === "points.added" ? "add" : "subtract",
      amount: 10,
      balance_after: 10,
      reference_id: `ref-${newId()}`,
      description: null,
      order_id: null,
      created_at: at,
      version: 1,
    }
  }
  return {
    id: newId(),
    user_id: newId(),
    reference_id: `order-${newId()}`,
    status: "pending",
    items: [{ sku: "MUG", name: null, quantity: 1, points: 10 }],
    total_points: 10,
    debit_transaction_id: newId(),
    failure_reason: null,
    status_history: [{ status: "pending", at }],
    created_at: at,
    updated_at: at,
    version: 1,
  }
}

/**
 * Publishes a public event of the partner as the platform will: a domain event in the log and its
 * `public_events` row, in one transaction (stand-in for the inline publisher). Returns the event id.
 */
export const publishEvent = (
  partnerId: string,
  options: {
    readonly type?: WebhookEndpoint.PublicEventType
    readonly occurredAt?: Date
    readonly data?: Record<string, unknown>
  } = {},
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifier = yield* LogNotifier
    const id = yield* sql.withTransaction(
      Effect.gen(function* () {
        const appended = yield* appendEvents(partnerId)
        const event = appended.recorded[0]
        if (event === undefined) return yield* Effect.dieMessage("nothing appended")
        const type = options.type ?? "user.created"
        const data = options.data ?? sampleDataFor(type)
        yield* sql`
          INSERT INTO public_events (id, partner_id, type, occurred_at, data, global_position)
          VALUES (${event.eventId}, ${partnerId}, ${type}, ${(options.occurredAt ?? new Date()).toISOString()},
                  ${JSON.stringify(data)}::jsonb, ${String(event.globalPosition)})`
        return event.eventId
      }),
    )
    yield* notifier.committed
    return id
  })

/** A delivery attempt as the receiver saw it. */
export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

/** How the receiver answers one request: a status (with headers and body), or never (`hang`). */
export type Answer =
  | {
      readonly status: number
      readonly headers?: Record<string, string>
      readonly body?: string
      readonly delayMs?: number
      /** Answered only once this settles: the test does something while the attempt is in flight. */
      readonly after?: Promise<unknown>
    }
  | { readonly hang: true }
  | { readonly stream: { readonly status: number; readonly bytes: number } }

/** A webhook receiver on 127.0.0.1 that records every request and answers as `answer` says. */
export interface Receiver {
  readonly url: (path?: string) => string
  readonly received: Array<Received>
  /** Bytes the streaming answers managed to write before the client closed the connection. */
  readonly streamed: Array<number>
  /** Received requests with this webhook-id. */
  readonly withId: (id: string) => ReadonlyArray<Received>
}

/** Starts a receiver for the scope; `answer` gets the request and how many with its webhook-id came before. */
export const startReceiver = (
  answer: (request: Received, earlier: number) => Answer = () => ({ status: 204 }),
) =>
  Effect.acquireRelease(
    Effect.async<{ receiver: Receiver; close: () => void }>((resume) => {
      const received: Array<Received> = []
      const streamed: Array<number> = []
      const withId = (id: string) => received.filter((request) => request.headers["webhook-id"] === id)
      const server = createServer((request, response: ServerResponse) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const entry: Received = {
            path: request.url ?? "/",
            headers: request.headers,
            body: Buffer.concat(chunks).toString("utf8"),
            at: Date.now(),
          }
          const earlier = withId(String(entry.headers["webhook-id"])).length
          received.push(entry)
          const reply = answer(entry, earlier)
          if ("hang" in reply) return
          if ("stream" in reply) {
            // Writes as fast as the client reads, until it closes: how much got out measures its read.
            response.writeHead(reply.stream.status, { "content-type": "text/plain" })
            let written = 0
            const chunk = Buffer.alloc(64 * 1024, "x")
            const pump = () => {
              while (written < reply.stream.bytes) {
                written += chunk.length
                if (!response.write(chunk)) return response.once("drain", pump)
              }
              response.end()
            }
            response.on("close", () => streamed.push(written))
            return pump()
          }
          const respond = () => {
            response.writeHead(reply.status, reply.headers ?? {})
            response.end(reply.body ?? "")
          }
          if (reply.after !== undefined) return void reply.after.then(respond)
          if (reply.delayMs === undefined) return respond()
          setTimeout(respond, reply.delayMs)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(
          Effect.succeed({
            receiver: {
              url: (path = "/hooks") => `http://127.0.0.1:${port}${path}`,
              received,
              streamed,
              withId,
            },
            close: () => {
              server.closeAllConnections()
              server.close()
            },
          }),
        )
      })
    }),
    ({ close }) => Effect.sync(close),
  ).pipe(Effect.map(({ receiver }) => receiver))

/** True when the delivery verifies with the secret (Standard Webhooks, through the library receivers use). */
export const verifies = (request: Received, secret: string): boolean => {
  try {
    new Webhook(secret).verify(request.body, {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"]),
    })
    return true
  } catch {
    return false
  }
}

/** A delivery row as tests look at it. */
export interface DeliveryRow {
  readonly id: string
  readonly event_id: string
  readonly endpoint_id: string
  readonly attempt: number
  readonly status: string
  readonly response_status: number | null
  readonly duration_ms: number | null
  readonly error: string | null
  readonly attempted_at: Date | null
  readonly next_attempt_at: Date | null
  readonly leased_by: string | null
}

/** Every delivery row of an endpoint, by event and attempt. */
export const deliveriesOf = (endpointId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<DeliveryRow>`
      SELECT id, event_id, endpoint_id, attempt, status, response_status, duration_ms, error, attempted_at,
             next_attempt_at, leased_by
      FROM webhook_deliveries WHERE endpoint_id = ${endpointId} ORDER BY id`,
  )

export { eventually } from "../../src/testing/index.js"

/**
 * Runs `effect` in a transaction of its own and returns once it has run, its transaction still open (its locks
 * held, its writes unseen): the returned effect commits it and gives its result.
 */
export const runUncommitted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ran = yield* Deferred.make<void>()
    const commit = yield* Deferred.make<void>()
    const running = yield* Effect.fork(
      sql.withTransaction(
        effect.pipe(Effect.zipLeft(Deferred.succeed(ran, undefined)), Effect.zipLeft(Deferred.await(commit))),
      ),
    )
    yield* Deferred.await(ran)
    return Effect.zipRight(Deferred.succeed(commit, undefined), Fiber.join(running))
  })

/** Holds an endpoint's stream locked (a stalled process) until the returned effect lets it go. */
export const holdEndpointStream = (partnerId: string, endpointId: string) =>
  runUncommitted(lockStreams({ partnerId, write: [webhookStream(endpointId).streamId], read: [] }))

/** Holds the claims' lock, as a claim that stalls in its transaction, until the returned effect lets it go. */
export const holdClaimsLock = runUncommitted(
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`SELECT pg_advisory_xact_lock(hashtextextended('webhook-dispatch:claims', 0))`,
  ),
)

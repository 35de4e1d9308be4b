import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { expect, layer } from "@effect/vitest"
import { verifyWebhook } from "@points/client"
import { testDatabase } from "@points/infrastructure/testing"
import { Effect } from "effect"
import { Webhook } from "standardwebhooks"
import { activeUserAt, callAt, eventually, newPartnerAt } from "./harness.js"
import {
  killProcess,
  listeningProcess,
  npmStartProcess,
  processSettings,
  waitForOutput,
} from "./processes.js"

/** One delivery as the receiver got it. */
interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/** A webhook receiver on 127.0.0.1 that answers 200 to everything and keeps what it got. */
const receiver = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly received: Array<Received>; close: () => void }>((resume) => {
    const received: Array<Received> = []
    const server = createServer((request, response) => {
      let body = ""
      request.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk
      })
      request.on("end", () => {
        received.push({ headers: request.headers, body })
        response.writeHead(200).end()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}/hooks`, received, close: () => server.close() }))
    })
  }),
  (hooks) => Effect.sync(() => hooks.close()),
)

const EVERY_TYPE_EXPECTED = [
  "order.created",
  "order.created",
  "order.status_changed",
  "order.status_changed",
  "order.status_changed",
  "order.status_changed",
  "points.added",
  "points.subtracted",
  "user.activated",
  "user.closed",
  "user.created",
]

layer(testDatabase({ poolSize: 2 }), { timeout: "240 seconds", excludeTestServices: true })(
  "The platform process (npm start: API and projections in one process)",
  (it) => {
    it.effect(
      "runs as `npm start`, listing every webhook attempt outcome, and stops, exiting 0, when SIGTERM reaches npm",
      () =>
        Effect.gen(function* () {
          const { base, env } = yield* processSettings()
          const npm = yield* npmStartProcess(env)
          yield* waitForOutput(npm, `listening on ${base}`, 60)
          // Its dispatchers list every outcome of an attempt from the start, at 0 (an alert has a series).
          const metrics = yield* Effect.promise(() =>
            fetch(`${base}/metrics`).then((response) => response.text()),
          )
          for (const outcome of ["succeeded", "failed", "cut_off", "lost"]) {
            expect(metrics).toMatch(
              new RegExp(`^webhook_delivery_attempts_total\\{outcome="${outcome}"\\} 0$`, "m"),
            )
          }
          npm.child.kill("SIGTERM")
          const exit = yield* Effect.promise(() => npm.exit).pipe(Effect.timeout("10 seconds"))
          expect(exit).toBe(0)
          expect(npm.stdout()).toContain('"message":"stopped"')
          // Nothing is left listening: the platform itself stopped, not only npm.
          const after = yield* Effect.promise(() =>
            fetch(`${base}/health/live`).then(
              (response) => `answered ${response.status}`,
              (error: { readonly cause?: { readonly code?: string } }) => error.cause?.code,
            ),
          )
          expect(after).toBe("ECONNREFUSED")
        }).pipe(Effect.scoped),
      90_000,
    )

    it.effect(
      "fulfils orders and delivers every event type, signed, to a receiver, also across a SIGKILL and a restart",
      () =>
        Effect.gen(function* () {
          const hooks = yield* receiver
          const { base, env } = yield* processSettings({
            FULFILMENT_DELAY_MS: "300",
            WEBHOOK_RETRY_SCHEDULE: "0,1,1,1",
            WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
          })
          const start = listeningProcess(env, base, "src/platform.ts")
          const first = yield* start
          const { token } = yield* newPartnerAt(base, "Platform Ltd")
          const endpoint = yield* callAt(base, "POST", "/api/webhooks/endpoints", {
            token,
            json: { url: hooks.url, description: "every type" },
          })
          expect(endpoint.status).toBe(201)
          const webhook = new Webhook(endpoint.body.secret)

          const userId = yield* activeUserAt(base, token, "platform-1", 30)
          const added = yield* callAt(base, "POST", "/api/points/add", {
            token,
            json: { transaction: { user_id: userId, amount: 1000, reference_id: "platform-add" } },
          })
          expect(added.status).toBe(201)
          const place = (reference: string, sku: string) =>
            callAt(base, "POST", "/api/orders", {
              token,
              headers: { "idempotency-key": reference },
              json: {
                user_id: userId,
                reference_id: reference,
                items: [{ sku, quantity: 2, points: 100 }],
              },
            })
          const shipped = yield* place("platform-order-1", "MUG")
          const failing = yield* place("platform-order-2", "FAIL-OUT-OF-STOCK")
          expect([shipped.status, failing.status]).toEqual([201, 201])

          // Killed with work in flight (orders pending, deliveries due); a new process finishes all of it.
          yield* killProcess(first)
          yield* start

          const final = (orderId: string) =>
            eventually(
              callAt(base, "GET", `/api/orders/${orderId}`, { token }),
              (reply) => reply.body.status === "completed" || reply.body.status === "failed",
              60,
            )
          expect((yield* final(shipped.body.id)).body.status).toBe("completed")
          const failed = (yield* final(failing.body.id)).body
          expect(failed.status).toBe("failed")
          expect(failed.status_history.map((change: { status: string }) => change.status)).toEqual([
            "pending",
            "processing",
            "failed",
          ])
          const account = yield* callAt(base, "GET", `/api/users/${userId}/points-account`, { token })
          expect(account.body.balance).toBe(1000 - 200)
          const subtracted = yield* callAt(base, "POST", "/api/points/subtract", {
            token,
            json: { transaction: { user_id: userId, amount: 50, reference_id: "platform-subtract" } },
          })
          expect(subtracted.body.balance_after).toBe(750)
          expect((yield* callAt(base, "DELETE", `/api/users/${userId}`, { token })).body.status).toBe(
            "closed",
          )

          // Every public event reached the receiver (at least once), signed with the endpoint's secret.
          const events = yield* callAt(base, "GET", "/api/events?limit=100", { token })
          const eventIds: Array<string> = events.body.data.map((event: { id: string }) => event.id)
          expect(events.body.data.map((event: { type: string }) => event.type).sort()).toEqual(
            EVERY_TYPE_EXPECTED,
          )
          const delivered = yield* eventually(
            Effect.sync(() => new Set(hooks.received.map((delivery) => delivery.headers["webhook-id"]))),
            (ids) => eventIds.every((id) => ids.has(id)),
            60,
          )
          expect([...delivered].sort()).toEqual([...eventIds].sort())
          for (const delivery of hooks.received) {
            const payload = webhook.verify(delivery.body, {
              "webhook-id": String(delivery.headers["webhook-id"]),
              "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
              "webhook-signature": String(delivery.headers["webhook-signature"]),
            }) as { id: string; type: string; data: { version: number } }
            expect(payload.id).toBe(delivery.headers["webhook-id"])
            expect(events.body.data.find((event: { id: string }) => event.id === payload.id)).toEqual(payload)
            // The client SDK's receiver check takes every delivery as it arrived, and decodes its event.
            const verified = yield* verifyWebhook({
              secrets: endpoint.body.secret,
              body: delivery.body,
              headers: delivery.headers,
            })
            expect(verified).toEqual(payload)
          }
        }).pipe(Effect.scoped),
      240_000,
    )
  },
)

import { lookup } from "node:dns/promises"
import { hostname } from "node:os"
import { SqlClient } from "@effect/sql"
import { expect, layer, it as plain } from "@effect/vitest"
import { WebhookEndpoint } from "@points/domain"
import { ConfigProvider, Effect, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import { Settings } from "../src/config.js"
import { call, newPartner, type Reply, testServer } from "./harness.js"

const hooks = "/api/webhooks/endpoints"

const expectInvalid = (reply: Reply, field: string) => {
  expect(reply.status).toBe(400)
  expect(reply.body.errors.length).toBeGreaterThan(0)
  for (const entry of reply.body.errors) expect(entry.code).toBe("GH1006")
  expect(reply.body.errors.map((entry: { message: string }) => entry.message).join("; ")).toContain(field)
}

// This machine's own name, asserted first to resolve (by /etc/hosts) to a loopback or private address: a name,
// not a literal, that only a resolution at registration refuses.
const ownPrivateName = Effect.gen(function* () {
  const own = hostname()
  const addresses = yield* Effect.promise(() => lookup(own, { all: true }))
  expect(addresses.length).toBeGreaterThan(0)
  expect(
    addresses.some(({ address, family }) =>
      WebhookEndpoint.isPrivateHost(family === 6 ? `[${address}]` : address),
    ),
  ).toBe(true)
  expect(WebhookEndpoint.isPrivateHost(own)).toBe(false)
  return own
})

const storedSecrets = (endpointId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ secret: string }>`SELECT secret FROM webhook_signing_secrets WHERE endpoint_id = ${endpointId}`,
      (rows) => rows.map((row) => row.secret).sort(),
    ),
  ).pipe(Effect.orDie)

/** True when the Standard Webhooks library takes the secret and verifies what it signed with it. */
const acceptedByStandardWebhooks = (secret: string) => {
  const webhook = new Webhook(secret)
  const timestamp = new Date()
  const body = '{"id":"evt"}'
  const signature = webhook.sign("evt", timestamp, body)
  const headers = {
    "webhook-id": "evt",
    "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
    "webhook-signature": signature,
  }
  return JSON.stringify(webhook.verify(body, headers)) === body
}

plain.effect(
  "reads WEBHOOK_ALLOW_PRIVATE_TARGETS as a boolean, false by default, refusing anything else",
  () =>
    Effect.gen(function* () {
      const settingsFrom = (values: Record<string, string>) =>
        Effect.provide(
          Settings,
          Settings.layer.pipe(
            Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(values))))),
          ),
        )
      expect((yield* settingsFrom({})).webhookAllowPrivateTargets).toBe(false)
      expect(
        (yield* settingsFrom({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" })).webhookAllowPrivateTargets,
      ).toBe(true)
      const bad = yield* Effect.flip(settingsFrom({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "sometimes" }))
      expect(String(bad)).toContain("WEBHOOK_ALLOW_PRIVATE_TARGETS")
    }),
)

layer(testServer(), { timeout: "120 seconds", excludeTestServices: true })(
  "The webhook endpoints API",
  (it) => {
    it.effect("creates with a whsec_ secret shown once; GET and list never show it; a retry replays it", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const body = {
          url: "https://hooks.acme.example/points",
          event_types: ["order.status_changed", "order.created"],
          description: "orders",
        }
        const created = yield* call("POST", hooks, {
          token,
          json: body,
          headers: { "idempotency-key": "hook-1" },
        })
        expect(created.status).toBe(201)
        expect(created.body).toMatchObject({
          url: body.url,
          event_types: ["order.created", "order.status_changed"],
          description: "orders",
          enabled: true,
          disabled_reason: null,
          version: 1,
        })
        const secret: string = created.body.secret
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
        expect(acceptedByStandardWebhooks(secret)).toBe(true)
        const replay = yield* call("POST", hooks, {
          token,
          json: body,
          headers: { "idempotency-key": "hook-1" },
        })
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect(replay.text).toBe(created.text)
        // Answers that show the secret are not to be stored by any cache, first answer and replay alike.
        for (const reply of [created, replay]) {
          expect(reply.headers.get("cache-control")).toBe("no-store")
          expect(reply.headers.get("pragma")).toBe("no-cache")
        }

        const got = yield* call("GET", `${hooks}/${created.body.id}`, { token })
        expect(got.status).toBe(200)
        const { secret: _shown, ...endpoint } = created.body
        expect(got.body).toEqual(endpoint)
        const listed = yield* call("GET", hooks, { token })
        expect(listed.body).toEqual({ data: [endpoint], next_cursor: null })
        const events = yield* call("GET", "/api/events", { token })
        for (const reply of [got, listed, events]) expect(reply.text).not.toContain(secret.slice(6))
        expect(yield* storedSecrets(created.body.id)).toEqual([secret])
      }),
    )

    it.effect("updates, rotates (the old secret kept), deletes (then 404 LE0002)", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const created = yield* call("POST", hooks, { token, json: { url: "https://hooks.acme.example/a" } })
        const id = created.body.id
        const patched = yield* call("PATCH", `${hooks}/${id}`, {
          token,
          json: { url: "https://hooks.acme.example/b", event_types: ["points.added"], enabled: false },
        })
        expect(patched.status).toBe(200)
        expect(patched.body).toMatchObject({
          url: "https://hooks.acme.example/b",
          event_types: ["points.added"],
          enabled: false,
          version: 2,
        })
        const described = yield* call("PATCH", `${hooks}/${id}`, { token, json: { description: "ledger" } })
        expect(described.body.description).toBe("ledger")
        const cleared = yield* call("PATCH", `${hooks}/${id}`, { token, json: { description: null } })
        expect(cleared.body).toMatchObject({ description: null, version: 4 })

        const rotated = yield* call("POST", `${hooks}/${id}/rotate-secret`, { token })
        expect(rotated.status).toBe(200)
        expect(rotated.headers.get("cache-control")).toBe("no-store")
        expect(rotated.body.secret).toMatch(/^whsec_/)
        expect(rotated.body.secret).not.toBe(created.body.secret)
        expect(rotated.body.version).toBe(5)
        expect(acceptedByStandardWebhooks(rotated.body.secret)).toBe(true)
        expect(yield* storedSecrets(id)).toEqual([created.body.secret, rotated.body.secret].sort())
        const afterRotation = yield* call("GET", `${hooks}/${id}`, { token })
        expect(afterRotation.text).not.toContain("whsec_")

        const deleted = yield* call("DELETE", `${hooks}/${id}`, { token })
        expect(deleted.status).toBe(200)
        expect(deleted.body).toEqual(afterRotation.body)
        for (const [method, path] of [
          ["DELETE", `${hooks}/${id}`],
          ["GET", `${hooks}/${id}`],
          ["PATCH", `${hooks}/${id}`],
          ["POST", `${hooks}/${id}/rotate-secret`],
        ] as const) {
          const reply = yield* call(method, path, {
            token,
            ...(method === "PATCH" ? { json: { enabled: true } } : {}),
          })
          expect(reply.status, `${method} ${path}`).toBe(404)
          expect(reply.body.errors[0].code).toBe("LE0002")
        }
        expect((yield* call("GET", hooks, { token })).body.data).toEqual([])
      }),
    )

    it.effect("a percent-encoded path to create or rotate-secret is answered with no-store too", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        // The router decodes each segment: these reach Create and rotate-secret, and answer a secret.
        const created = yield* call("POST", "/api/webhooks/%65ndpoints", {
          token,
          json: { url: "https://hooks.acme.example/encoded" },
        })
        expect(created.status, created.text).toBe(201)
        const rotated = yield* call("POST", `${hooks}/${created.body.id}/rotate%2Dsecret`, { token })
        expect(rotated.status, rotated.text).toBe(200)
        const listed = yield* call("GET", "/api/webhooks/%65ndpoints", { token })
        expect(listed.status, listed.text).toBe(200)
        for (const reply of [created, rotated]) {
          expect(reply.body.secret).toMatch(/^whsec_/)
          expect(reply.headers.get("cache-control"), reply.text).toBe("no-store")
          expect(reply.headers.get("pragma"), reply.text).toBe("no-cache")
        }
        expect(listed.headers.get("cache-control")).toBe("no-store")
        // An encoded `/` stays inside its segment, where the router reads it: no route, nothing kept from a cache.
        const notRouted = yield* call(
          "POST",
          `/api/webhooks/endpoints%2F${created.body.id}%2Frotate-secret`,
          {
            token,
          },
        )
        expect(notRouted.status).toBe(404)
        expect(notRouted.headers.get("cache-control")).toBeNull()
      }),
    )

    it.effect("another partner's endpoint is 404 LE0002 for every operation, and stays as it was", () =>
      Effect.gen(function* () {
        const acme = yield* newPartner("Acme")
        const globex = yield* newPartner("Globex")
        const created = yield* call("POST", hooks, {
          token: acme.token,
          json: { url: "https://hooks.acme.example/a" },
        })
        const id = created.body.id
        for (const [method, path] of [
          ["GET", `${hooks}/${id}`],
          ["PATCH", `${hooks}/${id}`],
          ["POST", `${hooks}/${id}/rotate-secret`],
          ["DELETE", `${hooks}/${id}`],
        ] as const) {
          const reply = yield* call(method, path, {
            token: globex.token,
            ...(method === "PATCH" ? { json: { enabled: false } } : {}),
          })
          expect(reply.status, `${method} ${path}`).toBe(404)
          expect(reply.body.errors[0].code).toBe("LE0002")
        }
        expect((yield* call("GET", hooks, { token: globex.token })).body.data).toEqual([])
        const still = yield* call("GET", `${hooks}/${id}`, { token: acme.token })
        expect(still.body).toMatchObject({ enabled: true, version: 1 })
      }),
    )

    it.effect(
      "refuses private, loopback and plain-http targets, and bad bodies, with 400 GH1006 naming the field",
      () =>
        Effect.gen(function* () {
          const { token } = yield* newPartner()
          for (const url of [
            "https://127.0.0.1/hook",
            "https://localhost:8443/hook",
            "https://10.1.2.3/hook",
            "https://[::1]/hook",
            "https://192.168.0.10/hook",
            "https://203.0.113.5/hook",
            "https://[2001:db8::1]/hook",
            "https://[2002:a00:1::]/hook",
            "https://[::127.0.0.1]/hook",
            "http://hooks.acme.example/plain",
          ]) {
            expectInvalid(yield* call("POST", hooks, { token, json: { url } }), "url")
          }
          const good = yield* call("POST", hooks, { token, json: { url: "https://hooks.acme.example/a" } })
          expectInvalid(
            yield* call("PATCH", `${hooks}/${good.body.id}`, { token, json: { url: "https://127.0.0.1/x" } }),
            "url",
          )
          expectInvalid(yield* call("POST", hooks, { token, json: {} }), "url")
          expectInvalid(yield* call("POST", hooks, { token, json: { url: "not a url" } }), "url")
          expectInvalid(
            yield* call("POST", hooks, {
              token,
              json: { url: `https://hooks.acme.example/${"x".repeat(2030)}` },
            }),
            "url",
          )
          expectInvalid(
            yield* call("POST", hooks, {
              token,
              json: { url: "https://hooks.acme.example/a", event_types: ["order.created", "user.updated"] },
            }),
            "event_types",
          )
          expectInvalid(
            yield* call("POST", hooks, {
              token,
              json: { url: "https://hooks.acme.example/a", event_types: "all" },
            }),
            "event_types",
          )
          expectInvalid(
            yield* call("POST", hooks, {
              token,
              json: { url: "https://hooks.acme.example/a", description: "d".repeat(1001) },
            }),
            "description",
          )
          expectInvalid(
            yield* call("POST", hooks, {
              token,
              json: { url: "https://hooks.acme.example/a", enabled: "yes" },
            }),
            "enabled",
          )
          const both = yield* call("POST", hooks, { token, json: { url: 5, enabled: "yes" } })
          expectInvalid(both, "url")
          expectInvalid(both, "enabled")
          // A refused target is reported beside the other fields' problems, not only once they are right.
          for (const [method, path] of [
            ["POST", hooks],
            ["PATCH", `${hooks}/${good.body.id}`],
          ] as const) {
            const refused = yield* call(method, path, {
              token,
              json: { url: "http://hooks.acme.example/plain", enabled: "yes", description: 5 },
            })
            expect(refused.status).toBe(400)
            expect(refused.body.errors.map((entry: { message: string }) => entry.message)).toEqual([
              "url must use https",
              "description must be a string or null",
              "enabled must be a boolean",
            ])
          }
          expectInvalid(
            yield* call("PATCH", `${hooks}/${good.body.id}`, { token, json: { event_types: ["nope"] } }),
            "event_types",
          )
          const own = yield* ownPrivateName
          for (const key of [{}, { "Idempotency-Key": "own-name" }]) {
            const refused = yield* call("POST", hooks, {
              token,
              headers: key,
              json: { url: `https://${own}/x` },
            })
            expectInvalid(refused, "url")
            expect(refused.body.errors[0].message).toBe(
              "url must not name a host that resolves to a private, loopback or link-local address",
            )
          }
          expectInvalid(
            yield* call("PATCH", `${hooks}/${good.body.id}`, { token, json: { url: `https://${own}/x` } }),
            "url",
          )
          const list = yield* call("GET", hooks, { token })
          expect(list.body.data).toHaveLength(1)
          expectInvalid(yield* call("GET", `${hooks}?limit=500`, { token }), "limit")
          expectInvalid(yield* call("GET", `${hooks}?cursor=nope`, { token }), "cursor")
        }),
    )
  },
)

layer(testServer({ webhookAllowPrivateTargets: true }), {
  timeout: "120 seconds",
  excludeTestServices: true,
})("The webhook endpoints API with WEBHOOK_ALLOW_PRIVATE_TARGETS=true", (it) => {
  it.effect("accepts private, loopback and plain-http targets", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const own = yield* ownPrivateName
      for (const url of [
        "http://127.0.0.1:9999/hook",
        "http://localhost/hook",
        "https://10.1.2.3/hook",
        `https://${own}/hook`,
      ]) {
        const reply = yield* call("POST", hooks, { token, json: { url } })
        expect(reply.status, url).toBe(201)
        expect(reply.body.url).toBe(url)
      }
      expectInvalid(yield* call("POST", hooks, { token, json: { url: "ftp://127.0.0.1/x" } }), "url")
    }),
  )
})

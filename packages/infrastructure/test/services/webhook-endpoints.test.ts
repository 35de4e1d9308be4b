import { lookup } from "node:dns/promises"
import { hostname } from "node:os"
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { InvalidParams, LimitReached, ResourceNotFound, WebhookEndpoint } from "@points/domain"
import { Deferred, Duration, Effect, Exit, Fiber } from "effect"
import { Webhook } from "standardwebhooks"
import {
  createWebhookEndpoint,
  getWebhookEndpointResource,
  HostLookup,
  type HostResolver,
  listWebhookEndpointResources,
  newSigningSecret,
  removeWebhookEndpoint,
  rotateWebhookEndpointSecret,
  TARGET_LOOKUP_TIMEOUT,
  updateWebhookEndpoint,
} from "../../src/index.js"
import { eventually } from "../../src/testing/index.js"
import { newPartner, serviceDatabase } from "./service-fixtures.js"

const url = (text: string) => WebhookEndpoint.WebhookUrl.make(text)
const strict = { allowPrivateTargets: false }

interface SecretRow {
  readonly id: string
  readonly partner_id: string
  readonly endpoint_id: string
  readonly secret: string
}

const storedSecrets = (endpointId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<SecretRow>`SELECT id, partner_id, endpoint_id, secret FROM webhook_signing_secrets
                            WHERE endpoint_id = ${endpointId} ORDER BY id`,
  )

// A resolver that knows a few names, without /etc/hosts or a network: `slow` never answers, the rest of the
// unknown ones are ENOTFOUND as a name not (yet) in DNS is.
const names: Readonly<Record<string, ReadonlyArray<string>>> = {
  "loopback.partner.example": ["127.0.0.1"],
  "private.partner.example": ["10.0.0.1"],
  "six.partner.example": ["::1"],
  "link-local.partner.example": ["169.254.169.254"],
  "mixed.partner.example": ["93.184.216.34", "10.0.0.1"],
  "public.partner.example": ["93.184.216.34", "2606:2800:220:1::"],
}
const fakeLookup: HostResolver = (host, _options, callback) => {
  if (host === "slow.partner.example") return
  const addresses = names[host]
  if (addresses === undefined) {
    const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${host}`)
    error.code = "ENOTFOUND"
    return callback(error, [])
  }
  callback(
    null,
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
  )
}
const withFakeLookup = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, HostLookup, fakeLookup)

const refusedAsResolved = (refused: unknown) => {
  expect(refused).toBeInstanceOf(InvalidParams)
  expect((refused as InvalidParams).message).toBe(
    "url must not name a host that resolves to a private, loopback or link-local address",
  )
}

/** Signs and verifies a message with the Standard Webhooks library: the secret is one it accepts. */
const signsWith = (secret: string) => {
  const webhook = new Webhook(secret)
  const headers = {
    "webhook-id": "msg_1",
    "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
  }
  const payload = '{"ok":true}'
  const signature = webhook.sign(headers["webhook-id"], new Date(), payload)
  return webhook.verify(payload, { ...headers, "webhook-signature": signature })
}

layer(serviceDatabase(), { excludeTestServices: true })("webhook endpoint services", (it) => {
  it("makes secrets in the Standard Webhooks form: whsec_ and 32 random bytes in base64", () => {
    const secret = newSigningSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32)
    expect(newSigningSecret()).not.toBe(secret)
    expect(signsWith(secret)).toEqual({ ok: true })
  })

  describe("the limit of endpoints per partner", () => {
    const create = (context: Parameters<typeof createWebhookEndpoint>[0], n: number) =>
      createWebhookEndpoint(context, { url: url(`https://hooks.example.com/${n}`) }, strict)
    const countOf = (partnerId: string) =>
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ n: number }>`
          SELECT count(*)::int AS n FROM webhook_endpoints WHERE partner_id = ${partnerId}`,
      ).pipe(Effect.map((rows) => rows[0]?.n))
    const limitReached = new LimitReached({ resource: "webhook endpoints", limit: 20 })

    it.effect("created at once, as many as asked for, never more than 20: the others LE0007", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const results = yield* Effect.all(
          Array.from({ length: 26 }, (_, n) => Effect.either(create(context, n))),
          { concurrency: 8 },
        )
        const refused = results.filter((result) => result._tag === "Left").map((result) => result.left)
        expect(results.filter((result) => result._tag === "Right")).toHaveLength(20)
        expect(refused).toEqual(Array.from({ length: 6 }, () => limitReached))
        expect(yield* countOf(context.partnerId)).toBe(20)
        // Another partner is not affected.
        const other = yield* newPartner()
        expect((yield* create(other, 0)).url).toBe("https://hooks.example.com/0")
      }),
    )

    it.effect("a creation waits for a rebuild that holds the log, without a deadlock", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const context = yield* newPartner()
        // A rebuild's first steps, held open: the log locked against writers, then the read models truncated
        // once a creation is waiting.
        const locked = yield* Deferred.make<void>()
        const truncate = yield* Deferred.make<void>()
        const rebuild = yield* Effect.fork(
          sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`LOCK TABLE events IN SHARE MODE`
              yield* Deferred.succeed(locked, undefined)
              yield* Deferred.await(truncate)
              yield* sql`TRUNCATE webhook_endpoints`
            }),
          ),
        )
        yield* Deferred.await(locked)
        const creation = yield* Effect.fork(create(context, 0))
        // The creation waits on the log (its append's lock; with the count before it, on webhook_endpoints too).
        yield* eventually(
          sql<{ waiting: number }>`
            SELECT count(*)::int AS waiting FROM pg_locks
            WHERE relation = 'events'::regclass AND NOT granted
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          (rows) => (rows[0]?.waiting ?? 0) > 0,
        )
        yield* Deferred.succeed(truncate, undefined)
        expect(Exit.isSuccess(yield* Fiber.await(rebuild))).toBe(true)
        const made = yield* Fiber.join(creation)
        expect(made.url).toBe("https://hooks.example.com/0")
      }),
    )

    it.effect("a deleted endpoint makes room for one more", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const made = []
        for (let n = 0; n < 20; n++) made.push(yield* create(context, n))
        expect(yield* Effect.flip(create(context, 20))).toEqual(limitReached)
        yield* removeWebhookEndpoint(context, made[0]?.id ?? "")
        expect((yield* create(context, 21)).url).toBe("https://hooks.example.com/21")
        expect(yield* Effect.flip(create(context, 22))).toEqual(limitReached)
      }),
    )
  })

  describe("create, get, list, update, rotate, delete", () => {
    it.effect("creates an endpoint with its secret stored only in webhook_signing_secrets", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const created = yield* createWebhookEndpoint(
          context,
          { url: url("https://hooks.example.com/points"), event_types: ["order.created", "user.created"] },
          strict,
        )
        expect(created).toMatchObject({
          url: "https://hooks.example.com/points",
          event_types: ["user.created", "order.created"],
          description: null,
          enabled: true,
          disabled_reason: null,
          version: 1,
        })
        expect(created.secret).toMatch(/^whsec_/)
        const { secret, ...endpoint } = created
        const got = yield* getWebhookEndpointResource(context, created.id)
        expect(got).toEqual(endpoint)
        expect(JSON.stringify(got)).not.toContain(secret)
        const stored = yield* storedSecrets(created.id)
        expect(stored).toEqual([
          expect.objectContaining({ partner_id: context.partnerId, endpoint_id: created.id, secret }),
        ])
        // The read model and the log reference the secret by id only.
        const sql = yield* SqlClient.SqlClient
        const rows =
          yield* sql`SELECT row_to_json(w)::text AS row FROM webhook_endpoints w WHERE id = ${created.id}`
        expect(JSON.stringify(rows)).not.toContain(secret.slice(6))
        expect(JSON.stringify(rows)).toContain(stored[0]?.id)
        const events =
          yield* sql`SELECT data::text AS data FROM events WHERE stream_id = ${`webhook-${created.id}`}`
        expect(JSON.stringify(events)).not.toContain(secret.slice(6))
      }),
    )

    it.effect("rotates: a new secret, the old one kept and referenced for its grace period", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const created = yield* createWebhookEndpoint(
          context,
          { url: url("https://hooks.example.com/a") },
          strict,
        )
        const rotated = yield* rotateWebhookEndpointSecret(context, created.id)
        expect(rotated.secret).not.toBe(created.secret)
        expect(rotated.version).toBe(2)
        expect(signsWith(rotated.secret)).toEqual({ ok: true })
        const stored = yield* storedSecrets(created.id)
        expect(stored.map((row) => row.secret).sort()).toEqual([created.secret, rotated.secret].sort())
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ secret_id: string; previous_secret_id: string; grace: number }>`
          SELECT secret_id, previous_secrets -> 0 ->> 'id' AS previous_secret_id,
                 extract(epoch FROM (previous_secrets -> 0 ->> 'valid_until')::timestamptz - updated_at)::int
                   AS grace
          FROM webhook_endpoints WHERE id = ${created.id}`
        expect(stored.find((secret) => secret.id === row?.secret_id)?.secret).toBe(rotated.secret)
        expect(stored.find((secret) => secret.id === row?.previous_secret_id)?.secret).toBe(created.secret)
        expect(row?.grace).toBe(86_400)
      }),
    )

    it.effect("updates only what is given; a null description clears it; lists page", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const created = yield* createWebhookEndpoint(
          context,
          { url: url("https://hooks.example.com/a"), description: "orders", enabled: false },
          strict,
        )
        const same = yield* updateWebhookEndpoint(context, created.id, {}, strict)
        expect(same.version).toBe(1)
        const changed = yield* updateWebhookEndpoint(
          context,
          created.id,
          { url: url("https://hooks.example.com/b"), event_types: ["points.added"], enabled: true },
          strict,
        )
        expect(changed).toMatchObject({
          url: "https://hooks.example.com/b",
          event_types: ["points.added"],
          description: "orders",
          enabled: true,
          version: 2,
        })
        const cleared = yield* updateWebhookEndpoint(context, created.id, { description: null }, strict)
        expect(cleared).toMatchObject({ description: null, version: 3 })
        yield* createWebhookEndpoint(context, { url: url("https://hooks.example.com/c") }, strict)
        const page = yield* listWebhookEndpointResources(context, { limit: 1 })
        expect(page.data.map((endpoint) => endpoint.id)).toEqual([created.id])
        const next = yield* listWebhookEndpointResources(context, {
          limit: 1,
          cursor: page.next_cursor ?? "",
        })
        expect(next.data).toHaveLength(1)
        expect(next.next_cursor).toBeNull()
        expect(JSON.stringify([page, next])).not.toContain("whsec_")
      }),
    )

    it.effect("deletes: answers the endpoint as it was, then LE0002 for every operation", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const created = yield* createWebhookEndpoint(
          context,
          { url: url("https://hooks.example.com/a") },
          strict,
        )
        const { secret: _secret, ...endpoint } = created
        expect(yield* removeWebhookEndpoint(context, created.id)).toEqual(endpoint)
        const gone = new ResourceNotFound({ resource: "webhook endpoint", id: created.id })
        expect(yield* Effect.flip(removeWebhookEndpoint(context, created.id))).toEqual(gone)
        expect(yield* Effect.flip(getWebhookEndpointResource(context, created.id))).toEqual(gone)
        expect(yield* Effect.flip(rotateWebhookEndpointSecret(context, created.id))).toEqual(gone)
        expect(
          yield* Effect.flip(updateWebhookEndpoint(context, created.id, { enabled: true }, strict)),
        ).toEqual(gone)
        expect((yield* listWebhookEndpointResources(context, {})).data).toEqual([])
      }),
    )

    it.effect("another partner's endpoint, or no id at all, is LE0002", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const other = yield* newPartner("Globex")
        const created = yield* createWebhookEndpoint(
          context,
          { url: url("https://hooks.example.com/a") },
          strict,
        )
        for (const id of [created.id, "nope"]) {
          const refusals = [
            yield* Effect.flip(getWebhookEndpointResource(other, id)),
            yield* Effect.flip(updateWebhookEndpoint(other, id, { enabled: false }, strict)),
            yield* Effect.flip(rotateWebhookEndpointSecret(other, id)),
            yield* Effect.flip(removeWebhookEndpoint(other, id)),
          ]
          for (const refusal of refusals) expect(refusal).toBeInstanceOf(ResourceNotFound)
        }
        expect((yield* getWebhookEndpointResource(context, created.id)).version).toBe(1)
        expect(yield* storedSecrets(created.id)).toHaveLength(1)
      }),
    )

    it.effect("refuses private, loopback and plain-http targets unless allowed, storing nothing", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        for (const target of [
          "https://127.0.0.1/hook",
          "https://localhost/hook",
          "http://hooks.example.com/x",
        ]) {
          const refused = yield* Effect.flip(createWebhookEndpoint(context, { url: url(target) }, strict))
          expect(refused).toBeInstanceOf(InvalidParams)
          expect((refused as InvalidParams).field).toBe("url")
        }
        expect((yield* listWebhookEndpointResources(context, {})).data).toEqual([])
        const sql = yield* SqlClient.SqlClient
        const secrets =
          yield* sql`SELECT 1 FROM webhook_signing_secrets WHERE partner_id = ${context.partnerId}`
        expect(secrets).toHaveLength(0)
        const allowed = yield* createWebhookEndpoint(
          context,
          { url: url("http://127.0.0.1:9999/hook") },
          { allowPrivateTargets: true },
        )
        expect(allowed.url).toBe("http://127.0.0.1:9999/hook")
        const moved = yield* Effect.flip(
          updateWebhookEndpoint(context, allowed.id, { url: url("https://10.0.0.1/x") }, strict),
        )
        expect(moved).toBeInstanceOf(InvalidParams)
      }),
    )

    it.effect(
      "refuses a name that resolves to a private, loopback or link-local address unless allowed",
      () =>
        withFakeLookup(
          Effect.gen(function* () {
            const context = yield* newPartner()
            for (const host of [
              "loopback.partner.example",
              "private.partner.example",
              "six.partner.example",
              "link-local.partner.example",
              "mixed.partner.example",
            ]) {
              const target = url(`https://${host}/hook`)
              refusedAsResolved(yield* Effect.flip(createWebhookEndpoint(context, { url: target }, strict)))
              const allowed = yield* createWebhookEndpoint(
                context,
                { url: target },
                { allowPrivateTargets: true },
              )
              expect(allowed.url).toBe(target)
            }
            const sql = yield* SqlClient.SqlClient
            const secrets =
              yield* sql`SELECT 1 FROM webhook_signing_secrets WHERE partner_id = ${context.partnerId}`
            expect(secrets).toHaveLength(5)
            // A url changed to such a name is refused the same way, and changes nothing.
            const good = yield* createWebhookEndpoint(
              context,
              { url: url("https://public.partner.example/hook") },
              strict,
            )
            refusedAsResolved(
              yield* Effect.flip(
                updateWebhookEndpoint(
                  context,
                  good.id,
                  { url: url("https://private.partner.example/x"), description: "moved" },
                  strict,
                ),
              ),
            )
            expect(yield* getWebhookEndpointResource(context, good.id)).toMatchObject({
              url: "https://public.partner.example/hook",
              description: null,
              version: 1,
            })
            const moved = yield* updateWebhookEndpoint(
              context,
              good.id,
              { url: url("https://private.partner.example/x") },
              { allowPrivateTargets: true },
            )
            expect(moved).toMatchObject({ url: "https://private.partner.example/x", version: 2 })
            // A PATCH that does not give a url resolves nothing.
            const described = yield* updateWebhookEndpoint(context, moved.id, { description: "d" }, strict)
            expect(described.version).toBe(3)
          }),
        ),
    )

    it.effect(
      "accepts a name that does not resolve, or not within the lookup timeout: delivery checks it",
      () =>
        withFakeLookup(
          Effect.gen(function* () {
            const context = yield* newPartner()
            const absent = yield* createWebhookEndpoint(
              context,
              { url: url("https://not-yet.partner.example/hook") },
              strict,
            )
            expect(absent.url).toBe("https://not-yet.partner.example/hook")
            const started = Date.now()
            const slow = yield* createWebhookEndpoint(
              context,
              { url: url("https://slow.partner.example/hook") },
              strict,
            )
            const waited = Date.now() - started
            expect(slow.url).toBe("https://slow.partner.example/hook")
            expect(waited).toBeGreaterThanOrEqual(Duration.toMillis(TARGET_LOOKUP_TIMEOUT) - 50)
            expect(waited).toBeLessThan(Duration.toMillis(TARGET_LOOKUP_TIMEOUT) + 2_000)
            const moved = yield* updateWebhookEndpoint(
              context,
              absent.id,
              { url: url("https://slow.partner.example/other") },
              strict,
            )
            expect(moved.url).toBe("https://slow.partner.example/other")
          }),
        ),
    )

    it.effect("resolves with the system's resolver by default: this machine's own name is private", () =>
      Effect.gen(function* () {
        // The host name of a machine resolves (/etc/hosts) to a loopback or private address of its own; the
        // test means nothing where it does not.
        const own = hostname()
        const addresses = yield* Effect.promise(() => lookup(own, { all: true }))
        expect(addresses.length).toBeGreaterThan(0)
        expect(
          addresses.some(({ address, family }) =>
            WebhookEndpoint.isPrivateHost(family === 6 ? `[${address}]` : address),
          ),
        ).toBe(true)
        const context = yield* newPartner()
        const target = url(`https://${own}/hook`)
        refusedAsResolved(yield* Effect.flip(createWebhookEndpoint(context, { url: target }, strict)))
        const allowed = yield* createWebhookEndpoint(context, { url: target }, { allowPrivateTargets: true })
        refusedAsResolved(
          yield* Effect.flip(updateWebhookEndpoint(context, allowed.id, { url: target }, strict)),
        )
      }),
    )
  })
})

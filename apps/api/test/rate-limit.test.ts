import type * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { WriteSideLive } from "@points/infrastructure"
import { testDatabase } from "@points/infrastructure/testing"
import { Context, Effect, Layer } from "effect"
import { apiHttpServer, apiServerLayer } from "../src/http/node-server.js"
import { HttpAppLive } from "../src/server.js"
import {
  baseUrl,
  callAt,
  metricValue,
  newPartnerAt,
  nodeRequest,
  piecesOf,
  type Reply,
  testSettings,
} from "./harness.js"

/** The base URLs of two API servers (as two processes would be) over one database. */
class Servers extends Context.Tag("test/Servers")<Servers, readonly [string, string]>() {}

const policy = { rateLimitPerSecond: 1, rateLimitBurst: 5 }

// One server on its own socket; each `Layer.build` builds its own HttpAppLive (layers are memoised per build).
const apiServer = HttpAppLive.pipe(
  Layer.provideMerge(apiServerLayer(apiHttpServer, { port: 0, host: "127.0.0.1" })),
)

const TwoServersLive = Layer.scoped(
  Servers,
  Effect.gen(function* () {
    const urlOf = (context: Context.Context<HttpServer.HttpServer>) => Effect.provide(baseUrl, context)
    const first = yield* urlOf(yield* Layer.build(apiServer))
    const second = yield* urlOf(yield* Layer.build(apiServer))
    return [first, second] as const
  }),
).pipe(
  Layer.provide(WriteSideLive),
  Layer.provide(testSettings(policy)),
  // One database for both: the rate limit is shared through it, not kept in either server's memory.
  Layer.provide(testDatabase()),
)

const expectRateLimitHeaders = (reply: Reply) => {
  expect(reply.headers.get("ratelimit-policy")).toBe(`"partner";q=${policy.rateLimitBurst};w=1`)
  expect(reply.headers.get("ratelimit")).toMatch(/^"partner";r=\d+;t=\d+$/)
}

layer(TwoServersLive, { timeout: "120 seconds", excludeTestServices: true })(
  "The rate limit, shared by two API servers",
  (it) => {
    it.effect("lets the burst through across both servers and answers the rest 429 GH1009", () =>
      Effect.gen(function* () {
        const [first, second] = yield* Servers
        expect(first).not.toBe(second)
        const { token } = yield* newPartnerAt(first, "Busy")
        const rejectionsBefore = metricValue(
          (yield* callAt(first, "GET", "/metrics")).text,
          "rate_limit_rejections_total",
        )
        const startedAt = Date.now()
        const replies = yield* Effect.all(
          Array.from({ length: 12 }, (_, index) =>
            callAt(index % 2 === 0 ? first : second, "GET", "/api/users", { token }),
          ),
          { concurrency: "unbounded" },
        )
        const elapsedSeconds = (Date.now() - startedAt) / 1000
        const allowed = replies.filter((reply) => reply.status === 200)
        const refused = replies.filter((reply) => reply.status === 429)
        expect(allowed.length + refused.length).toBe(12)
        // The burst, plus at most what refilled (1 per second) while the requests ran.
        expect(allowed.length).toBeGreaterThanOrEqual(policy.rateLimitBurst)
        expect(allowed.length).toBeLessThanOrEqual(policy.rateLimitBurst + Math.ceil(elapsedSeconds))
        for (const reply of allowed) expectRateLimitHeaders(reply)
        for (const reply of refused) {
          expect(reply.body.errors[0].code).toBe("GH1009")
          expect(Number(reply.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
          expectRateLimitHeaders(reply)
          expect(reply.headers.get("ratelimit")).toMatch(/;r=0;/)
        }
        // Both servers run in this process: its /metrics counts every 429 of either.
        const rejectionsAfter = metricValue(
          (yield* callAt(second, "GET", "/metrics")).text,
          "rate_limit_rejections_total",
        )
        expect(rejectionsAfter - rejectionsBefore).toBe(refused.length)
      }),
    )
  },
)

// A bucket that refills one request a minute: what it holds is exactly what the test took from it.
const slowPolicy = { rateLimitPerSecond: 1 / 60, rateLimitBurst: 3 }

const OneSlowServerLive = apiServer.pipe(
  Layer.provide(WriteSideLive),
  Layer.provide(testSettings(slowPolicy)),
  Layer.provide(testDatabase()),
)

layer(OneSlowServerLive, { timeout: "120 seconds", excludeTestServices: true })(
  "The rate limit on a request refused before its route",
  (it) => {
    it.effect("a chunked body found too large takes a cell and says so; once the bucket is empty, 429", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const { token } = yield* newPartnerAt(base, "Oversized")
        const body = JSON.stringify({
          partner_user_id: "big",
          email: "b@example.com",
          name: "x".repeat(1_100_000),
        })
        const oversized = nodeRequest(`${base}/api/users`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          chunks: piecesOf(body),
          chunked: true,
        })
        const rejectionsBefore = metricValue(
          (yield* callAt(base, "GET", "/metrics")).text,
          "rate_limit_rejections_total",
        )

        const tooLarge = yield* oversized
        expect(tooLarge.status).toBe(413)
        expect(tooLarge.headers.get("ratelimit-policy")).toBe(`"partner";q=${slowPolicy.rateLimitBurst};w=1`)
        expect(tooLarge.headers.get("ratelimit")).toMatch(/^"partner";r=2;t=\d+$/)
        // The two cells left, then none.
        for (const left of [1, 0]) {
          const listed = yield* callAt(base, "GET", "/api/users", { token })
          expect(listed.status).toBe(200)
          expect(listed.headers.get("ratelimit")).toMatch(new RegExp(`^"partner";r=${left};`))
        }
        const throttled = yield* oversized
        expect(throttled.status).toBe(429)
        expect(throttled.body).toMatchObject({ errors: [{ code: "GH1009" }] })
        expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        expect(throttled.headers.get("ratelimit")).toMatch(/^"partner";r=0;/)
        const rejectionsAfter = metricValue(
          (yield* callAt(base, "GET", "/metrics")).text,
          "rate_limit_rejections_total",
        )
        expect(rejectionsAfter - rejectionsBefore).toBe(1)
        // Nothing was created by either.
        expect((yield* callAt(base, "GET", "/api/users", { token })).status).toBe(429)
      }),
    )
  },
)

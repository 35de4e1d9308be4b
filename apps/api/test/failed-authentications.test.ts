import { connect } from "node:net"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { FAILED_AUTHENTICATIONS_WINDOW_SECONDS } from "@points/infrastructure"
import { eventually } from "@points/infrastructure/testing"
import { Effect } from "effect"
import { ADMIN_TOKEN, baseUrl, call, heldRequest, newPartner, nodeRequest, testServer } from "./harness.js"

// One failure a second: ten per 10-second window per source network. Held tokens are remembered for a minute,
// so that one checked at the start is still held at the end.
const FAILURES_PER_WINDOW = FAILED_AUTHENTICATIONS_WINDOW_SECONDS

const unknownToken = (n: number) => `pos_at_${String(n).padStart(43, "Z")}`

// `count` GETs of `path` with made-up tokens, written at once on one connection from `from`: each answer's
// status, in order.
const pipelined = (from: string, path: string, authorization: (n: number) => string, count: number) =>
  Effect.flatMap(baseUrl, (base) =>
    Effect.async<ReadonlyArray<number>>((resume) => {
      const { hostname, port } = new URL(base)
      let received = ""
      const socket = connect({ port: Number(port), host: hostname, localAddress: from }, () => {
        let requests = ""
        for (let n = 0; n < count; n++) {
          const last = n === count - 1 ? "Connection: close\r\n" : ""
          requests += `GET ${path} HTTP/1.1\r\nHost: x\r\n${last}Authorization: ${authorization(n)}\r\n\r\n`
        }
        socket.write(requests)
      })
      socket.setEncoding("latin1")
      socket.on("data", (chunk: string) => {
        received += chunk
      })
      socket.on("close", () =>
        resume(Effect.succeed([...received.matchAll(/HTTP\/1\.1 (\d+) /g)].map((match) => Number(match[1])))),
      )
    }),
  )

// A request from `address` (one of 127.0.0.0/8: each its own network) with `authorization`.
const from = (address: string, method: string, path: string, authorization: string, body?: unknown) =>
  Effect.flatMap(baseUrl, (base) =>
    nodeRequest(`${base}${path}`, {
      method,
      localAddress: address,
      headers: {
        authorization,
        ...(body === undefined
          ? {}
          : { "content-type": "application/json", "idempotency-key": `key-${Math.random()}` }),
      },
      ...(body === undefined ? {} : { chunks: [JSON.stringify(body)] }),
    }),
  )

layer(testServer({ authFailureLimitPerAddress: 1, tokenCacheSeconds: 60 }), {
  timeout: "60 seconds",
  excludeTestServices: true,
})("Failed authentications per source network", (it) => {
  it.effect(
    "past the limit a network's bearer tokens go unchecked: 429 GH1009 with Retry-After; held tokens and other networks pass",
    () =>
      Effect.gen(function* () {
        const held = yield* newPartner("Held")
        const fresh = yield* newPartner("Fresh")
        // Checked once, so the process holds it as valid.
        expect((yield* from("127.0.0.2", "GET", "/api/users", `Bearer ${held.token}`)).status).toBe(200)
        for (let n = 0; n < FAILURES_PER_WINDOW; n++) {
          const reply = yield* from("127.0.0.2", "GET", "/api/users", `Bearer ${unknownToken(n)}`)
          expect(reply.status, `failure ${n + 1}`).toBe(401)
          expect(reply.body.errors[0].code).toBe("GH1003")
        }
        const refused = yield* from("127.0.0.2", "GET", "/api/users", `Bearer ${unknownToken(99)}`)
        expect(refused.status).toBe(429)
        expect(refused.body.errors).toEqual([
          {
            id: expect.any(String),
            code: "GH1009",
            message: expect.stringMatching(
              /^too many failed authentications from your network: retry after ([1-9]|10) s$/,
            ),
          },
        ])
        const retryAfter = Number(refused.headers.get("retry-after"))
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(FAILED_AUTHENTICATIONS_WINDOW_SECONDS)
        expect(refused.headers.get("ratelimit")).toBeNull()
        // A valid token the process does not hold yet is not looked up either.
        expect((yield* from("127.0.0.2", "GET", "/api/users", `Bearer ${fresh.token}`)).status).toBe(429)
        // One it holds still works, on the platform and on the direct write path, also after another token
        // is revoked (a revocation request for a made-up token, from another network, forgets that one only).
        expect((yield* from("127.0.0.2", "GET", "/api/users", `Bearer ${held.token}`)).status).toBe(200)
        const revoked = yield* call("POST", "/api/oauth/revoke", {
          body: new URLSearchParams({
            token: unknownToken(102),
            client_id: fresh.clientId,
            client_secret: fresh.clientSecret,
          }).toString(),
          headers: { "content-type": "application/x-www-form-urlencoded" },
        })
        expect(revoked.status).toBe(200)
        expect((yield* from("127.0.0.2", "GET", "/api/users", `Bearer ${held.token}`)).status).toBe(200)
        const user = yield* call("POST", "/api/users", {
          token: held.token,
          json: { partner_user_id: "held-user", email: "held@example.com" },
          headers: { "idempotency-key": "held-user" },
        })
        expect(user.status).toBe(201)
        // Every other network's tokens are checked as before.
        const other = yield* from("127.0.0.4", "GET", "/api/users", `Bearer ${unknownToken(100)}`)
        expect(other.status).toBe(401)
        expect((yield* from("127.0.0.4", "GET", "/api/users", `Bearer ${fresh.token}`)).status).toBe(200)
        // A body with an unchecked token is refused unread, as any other.
        const movement = yield* from("127.0.0.2", "POST", "/api/points/add", `Bearer ${unknownToken(101)}`, {
          user_id: user.body.id,
          amount: 1,
          reference_id: "unchecked",
        })
        expect(movement.status).toBe(429)
        expect(movement.body.errors[0].code).toBe("GH1009")
      }),
  )

  it.effect(
    "a request whose token fails counts once, though the server checks it before its body and at its route",
    () =>
      Effect.gen(function* () {
        // A POST's token is checked before its body is read and again by its route's authentication.
        for (let n = 0; n < FAILURES_PER_WINDOW; n++) {
          const reply = yield* from("127.0.0.5", "POST", "/api/users", `Bearer ${unknownToken(200 + n)}`, {
            email: `nobody${n}@example.com`,
          })
          expect(reply.status, `failure ${n + 1}`).toBe(401)
        }
        expect((yield* from("127.0.0.5", "GET", "/api/users", `Bearer ${unknownToken(300)}`)).status).toBe(
          429,
        )
      }),
  )

  it.scoped("counts a lookup whose client went away before it ended", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // Read inside the lock's transaction, which would see its first reading of the view again without
      // clearing it.
      const waitingLookups = Effect.zipRight(
        sql`SELECT pg_stat_clear_snapshot()`,
        Effect.map(
          sql<{ readonly waiting: number }>`
            SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query ILIKE '%access_tokens%'`,
          (rows) => rows[0]?.waiting ?? 0,
        ),
      )
      // Lookups held back by a lock on the tokens' table; their clients close their connections meanwhile.
      const gone = 3
      const base = yield* baseUrl
      yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`LOCK TABLE access_tokens IN ACCESS EXCLUSIVE MODE`
          const open = []
          for (let n = 0; n < gone; n++) {
            open.push(
              yield* heldRequest(
                base,
                `GET /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${unknownToken(400 + n)}\r\n\r\n`,
                0,
                "127.0.0.7",
              ),
            )
          }
          yield* eventually(waitingLookups, (waiting) => waiting === gone, 20)
          for (const one of open) one.close()
        }),
      )
      // Each counted though its request ended before its lookup did: the rest of the window's failures,
      // then refused.
      for (let n = gone; n < FAILURES_PER_WINDOW; n++) {
        const reply = yield* from("127.0.0.7", "GET", "/api/users", `Bearer ${unknownToken(500 + n)}`)
        expect(reply.status, `failure ${n + 1}`).toBe(401)
      }
      expect((yield* from("127.0.0.7", "GET", "/api/users", `Bearer ${unknownToken(600)}`)).status).toBe(429)
    }),
  )

  it.scoped("gives a network refused for its failures no sign of whether an admin token is right", () =>
    Effect.gen(function* () {
      for (let n = 0; n < FAILURES_PER_WINDOW; n++) {
        const reply = yield* from("127.0.0.8", "GET", "/admin/api/partners", `Bearer wrong-admin-token-${n}`)
        expect(reply.status, `failure ${n + 1}`).toBe(401)
      }
      // The right token with a body held back: answered at once, as a wrong one is, instead of being
      // admitted to wait for its body.
      for (const token of [ADMIN_TOKEN, "wrong-admin-token-x"]) {
        const held = yield* heldRequest(
          yield* baseUrl,
          `POST /admin/api/partners HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n",
          0,
          "127.0.0.8",
        )
        const answer = yield* Effect.promise(() => held.answer).pipe(Effect.timeout("10 seconds"))
        expect(answer.split("\r\n")[0], token).toBe("HTTP/1.1 429 Too Many Requests")
      }
    }),
  )

  it.effect(
    "lets exactly the allowance through when requests come together, pipelined on one connection",
    () =>
      Effect.gen(function* () {
        for (const [from, path, authorization] of [
          ["127.0.0.9", "/api/users", (n: number) => `Bearer ${unknownToken(700 + n)}`],
          ["127.0.0.10", "/admin/api/partners", (n: number) => `Bearer wrong-admin-token-${n}`],
        ] as const) {
          const statuses = yield* pipelined(from, path, authorization, 3 * FAILURES_PER_WINDOW)
          expect(statuses, path).toHaveLength(3 * FAILURES_PER_WINDOW)
          expect(
            statuses.filter((status) => status === 401),
            path,
          ).toHaveLength(FAILURES_PER_WINDOW)
          expect(
            statuses.filter((status) => status === 429),
            path,
          ).toHaveLength(2 * FAILURES_PER_WINDOW)
        }
      }),
  )

  it.effect("the right admin token costs its network nothing: only the wrong ones count", () =>
    Effect.gen(function* () {
      const admin = (token: string) => from("127.0.0.11", "GET", "/admin/api/partners", `Bearer ${token}`)
      for (let n = 0; n < FAILURES_PER_WINDOW - 1; n++) {
        expect((yield* admin(`wrong-admin-token-${n}`)).status, `failure ${n + 1}`).toBe(401)
      }
      // Each compared, and given back as it holds.
      for (let n = 0; n < 3; n++) expect((yield* admin(ADMIN_TOKEN)).status, `right ${n + 1}`).toBe(200)
      expect((yield* admin("wrong-admin-token-last")).status).toBe(401)
      expect((yield* admin("wrong-admin-token-past")).status).toBe(429)
    }),
  )

  it.effect("past the limit a network's admin tokens go uncompared, the right one too: 429 GH1009", () =>
    Effect.gen(function* () {
      // Requests without credentials are refused as before and count for nothing.
      expect((yield* from("127.0.0.3", "GET", "/admin/api/partners", "")).status).toBe(401)
      for (let n = 0; n < FAILURES_PER_WINDOW; n++) {
        const reply = yield* from("127.0.0.3", "GET", "/admin/api/partners", `Bearer wrong-admin-token-${n}`)
        expect(reply.status, `failure ${n + 1}`).toBe(401)
      }
      const right = yield* from("127.0.0.3", "GET", "/admin/api/partners", `Bearer ${ADMIN_TOKEN}`)
      expect(right.status).toBe(429)
      // Without a token it is 401 still, as on the partner routes.
      expect((yield* from("127.0.0.3", "GET", "/admin/api/partners", "")).status).toBe(401)
      expect(right.body.errors[0].code).toBe("GH1009")
      expect(Number(right.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      expect((yield* from("127.0.0.6", "GET", "/admin/api/partners", `Bearer ${ADMIN_TOKEN}`)).status).toBe(
        200,
      )
    }),
  )
})

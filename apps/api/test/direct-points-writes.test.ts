import { connect } from "node:net"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  activeUser,
  baseUrl,
  call,
  eventually,
  metricValue,
  newPartner,
  nodeRequest,
  type Reply,
  testServer,
} from "./harness.js"

const add = (userId: string, amount: number, reference: string) => ({
  transaction: { user_id: userId, amount, reference_id: reference },
})

const directCount = (result: "answered" | "handed_over") =>
  Effect.map(call("GET", "/metrics"), (reply) =>
    metricValue(reply.text, `direct_write_requests_total{result="${result}"}`),
  )

// What the two paths' answers share: every header but those that differ per request, and the body with its
// ids, amounts and times left out.
const shapeOf = (reply: Reply) => ({
  status: reply.status,
  headers: [...reply.headers.keys()].filter((name) => name !== "date").sort(),
  fields: Object.keys(reply.body).sort(),
})

// A keyed add as raw HTTP/1.1 text, its body cut to `sent` characters (the whole body by default).
const rawAdd = (token: string, key: string, body: string, sent = body.length) =>
  [
    "POST /api/points/add HTTP/1.1",
    "Host: 127.0.0.1",
    `Authorization: Bearer ${token}`,
    "Content-Type: application/json",
    `Idempotency-Key: ${key}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "",
    body.slice(0, sent),
  ].join("\r\n")

// The `r` (remaining) of a `RateLimit` header.
const remaining = (reply: Reply) => Number(/;r=(\d+);/.exec(reply.headers.get("ratelimit") ?? "")?.[1])

layer(testServer({ rateLimitPerSecond: 1, rateLimitBurst: 50 }), {
  timeout: "120 seconds",
  excludeTestServices: true,
})("The direct write path of points movements", (it) => {
  it.effect("answers a fresh keyed add itself, as the platform answers the same add", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const userId = yield* activeUser(token)
      const answeredBefore = yield* directCount("answered")
      const direct = yield* call("POST", "/api/points/add", {
        token,
        json: add(userId, 5, "direct-1"),
        headers: { "idempotency-key": "direct-1", "x-request-id": "direct-request-1" },
      })
      expect(direct.status).toBe(201)
      expect(yield* directCount("answered")).toBe(answeredBefore + 1)
      expect(direct.headers.get("x-request-id")).toBe("direct-request-1")
      expect(direct.body).toMatchObject({
        type: "add",
        amount: 5,
        balance_after: 5,
        reference_id: "direct-1",
      })

      // A query string keeps a request off the direct path (the router ignores it): the platform answers.
      const platform = yield* call("POST", "/api/points/add?via=platform", {
        token,
        json: add(userId, 6, "direct-2"),
        headers: { "idempotency-key": "direct-2", "x-request-id": "platform-request-1" },
      })
      expect(yield* directCount("answered")).toBe(answeredBefore + 1)
      expect(platform.status).toBe(201)
      expect(platform.body.balance_after).toBe(11)
      expect(shapeOf(direct)).toEqual(shapeOf(platform))
      for (const name of ["content-type", "api-version", "ratelimit-policy"]) {
        expect(direct.headers.get(name)).toBe(platform.headers.get(name))
      }

      // The transaction answered is the one recorded: its GET answers the same resource.
      const found = yield* call("GET", `/api/points/transactions/${direct.body.id}`, { token })
      expect(found.body).toEqual(direct.body)
    }),
  )

  it.effect("hands a replay to the platform, which answers the recorded response once", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const userId = yield* activeUser(token)
      const send = () =>
        call("POST", "/api/points/add", {
          token,
          json: add(userId, 3, "replayed-1"),
          headers: { "idempotency-key": "replayed-1" },
        })
      const first = yield* send()
      const handedBefore = yield* directCount("handed_over")
      const again = yield* send()
      expect(yield* directCount("handed_over")).toBe(handedBefore + 1)
      expect(again.status).toBe(201)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.text).toBe(first.text)
      // Counted once against the limit, though both paths saw it (twice, it would be 2 fewer: the rate refills
      // 1 a second meanwhile).
      expect(remaining(again)).toBeGreaterThanOrEqual(remaining(first) - 1)
      const account = yield* call("GET", `/api/users/${userId}/points-account`, { token })
      expect(account.body.balance).toBe(3)
    }),
  )

  it.effect("hands over a body the schema refuses: 400 recorded under its key, and nothing written", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const userId = yield* activeUser(token)
      const handedBefore = yield* directCount("handed_over")
      const send = () =>
        call("POST", "/api/points/add", {
          token,
          json: add(userId, -4, "refused-1"),
          headers: { "idempotency-key": "refused-1" },
        })
      const refused = yield* send()
      expect(refused.status).toBe(400)
      expect(refused.body.errors[0].code).toBe("GH1006")
      expect(yield* directCount("handed_over")).toBe(handedBefore + 1)
      const again = yield* send()
      expect(again.status).toBe(400)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      const transactions = yield* call("GET", "/api/points/transactions?reference_id=refused-1", { token })
      expect(transactions.body.data).toHaveLength(0)
    }),
  )

  it.effect("hands over a token it has not checked yet; a bad one is 401 from the platform", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const answeredBefore = yield* directCount("answered")
      const handedBefore = yield* directCount("handed_over")
      const reply = yield* call("POST", "/api/points/add", {
        token: `${token}x`,
        json: add("01a2234e-98cc-7277-a8c8-98873de4259e", 1, "bad-token"),
        headers: { "idempotency-key": "bad-token" },
      })
      expect(reply.status).toBe(401)
      expect(reply.headers.get("www-authenticate")).toContain("invalid_token")
      // Never taken: no token held as valid.
      expect(yield* directCount("answered")).toBe(answeredBefore)
      expect(yield* directCount("handed_over")).toBe(handedBefore)
    }),
  )

  it.effect("writes nothing for a body whose client went away before it all arrived", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const userId = yield* activeUser(token)
      const base = yield* baseUrl
      const body = JSON.stringify(add(userId, 9, "cut-1"))
      const { port } = new URL(base)
      // The head and half the body, then the connection closes.
      yield* Effect.async<void>((resume) => {
        const socket = connect(Number(port), "127.0.0.1", () => {
          socket.write(rawAdd(token, "cut-1", body, 20), () => {
            socket.destroy()
            resume(Effect.void)
          })
        })
      })
      // The key is unused: the whole request, sent again, is written now (201, not a replay).
      const whole = yield* call("POST", "/api/points/add", {
        token,
        json: add(userId, 9, "cut-1"),
        headers: { "idempotency-key": "cut-1" },
      })
      expect(whole.status).toBe(201)
      expect(whole.headers.get("idempotent-replayed")).toBeNull()
      const account = yield* call("GET", `/api/users/${userId}/points-account`, { token })
      expect(account.body.balance).toBe(9)
    }),
  )

  it.effect("answers pipelined movements on one connection in order, each once", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const userId = yield* activeUser(token)
      const base = yield* baseUrl
      const { port } = new URL(base)
      const requestOf = (amount: number, reference: string) =>
        rawAdd(token, reference, JSON.stringify(add(userId, amount, reference)))
      const answers = yield* Effect.async<string>((resume) => {
        let text = ""
        const socket = connect(Number(port), "127.0.0.1", () => {
          socket.write(
            requestOf(1, "pipelined-1") + requestOf(2, "pipelined-2") + requestOf(4, "pipelined-3"),
          )
        })
        socket.setEncoding("utf8")
        socket.on("data", (chunk: string) => {
          text += chunk
          if ((text.match(/HTTP\/1\.1 201/g) ?? []).length === 3 && text.includes('"pipelined-3"')) {
            socket.destroy()
            resume(Effect.succeed(text))
          }
        })
      })
      const references = [...answers.matchAll(/"reference_id":"(pipelined-\d)"/g)].map((match) => match[1])
      expect(references).toEqual(["pipelined-1", "pipelined-2", "pipelined-3"])
      const balances = [...answers.matchAll(/"balance_after":(\d+)/g)].map((match) => Number(match[1]))
      expect(balances).toEqual([1, 3, 7])
    }),
  )

  it.effect("answers a subtract too, and hands over the refusal of an insufficient balance", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const userId = yield* activeUser(token)
      yield* call("POST", "/api/points/add", {
        token,
        json: add(userId, 10, "funds-1"),
        headers: { "idempotency-key": "funds-1" },
      })
      const answeredBefore = yield* directCount("answered")
      const spent = yield* call("POST", "/api/points/subtract", {
        token,
        json: add(userId, 4, "spend-1"),
        headers: { "idempotency-key": "spend-1" },
      })
      expect(spent.status).toBe(201)
      expect(spent.body).toMatchObject({ type: "subtract", amount: 4, balance_after: 6 })
      expect(yield* directCount("answered")).toBe(answeredBefore + 1)
      const handedBefore = yield* directCount("handed_over")
      const overdrawn = yield* nodeRequest(`${yield* baseUrl}/api/points/subtract`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "idempotency-key": "spend-2",
        },
        chunks: [JSON.stringify(add(userId, 7, "spend-2"))],
      })
      expect(overdrawn.status).toBe(422)
      expect(overdrawn.body.errors[0].code).toBe("LE2002")
      expect(yield* directCount("handed_over")).toBe(handedBefore + 1)
    }),
  )
})

// A burst of 5: the partner's limit is reached within one batch's worth of requests.
layer(testServer({ rateLimitPerSecond: 1, rateLimitBurst: 5 }), {
  timeout: "120 seconds",
  excludeTestServices: true,
})("The direct write path of points movements, at its partner's rate limit", (it) => {
  it.effect(
    "answers the requests within the limit and hands the others over: 429, and nothing of them written",
    () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const userId = yield* activeUser(token)
        const handedBefore = yield* directCount("handed_over")
        const replies = yield* Effect.all(
          Array.from({ length: 12 }, (_, n) =>
            call("POST", "/api/points/add", {
              token,
              json: add(userId, n + 1, `limited-${n}`),
              headers: { "idempotency-key": `limited-${n}` },
            }),
          ),
          { concurrency: "unbounded" },
        )
        const created = replies.filter((reply) => reply.status === 201)
        const refused = replies.filter((reply) => reply.status === 429)
        expect(created.length + refused.length).toBe(12)
        expect(refused.length).toBeGreaterThan(0)
        for (const reply of refused) {
          expect(reply.body.errors[0].code).toBe("GH1009")
          expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(0)
        }
        // Each refusal was handed to the platform, with the decision taken here (counted once).
        expect(yield* directCount("handed_over")).toBe(handedBefore + refused.length)
        // Reads count against the limit too: each is sent again until the bucket has refilled. With every add
        // refused (the user's activation polls drained the bucket), the user has no account yet.
        const read = (path: string, orAlso = 200) =>
          eventually(call("GET", path, { token }), (reply) => reply.status === 200 || reply.status === orAlso)
        const account = yield* read(`/api/users/${userId}/points-account`, 404)
        const credited = created.reduce((sum, reply) => sum + reply.body.amount, 0)
        expect(account.status === 404 ? 0 : account.body.balance).toBe(credited)
        // A refused request's key is unused: nothing of it was recorded.
        const refusedIndex = replies.findIndex((reply) => reply.status === 429)
        const listed = yield* read(`/api/points/transactions?reference_id=limited-${refusedIndex}`)
        expect(listed.body.data).toHaveLength(0)
      }),
  )
})

import { type AddressInfo, connect } from "node:net"
import { deflateSync, gzipSync } from "node:zlib"
import { expect, layer } from "@effect/vitest"
import { API_VERSION } from "@points/http-api"
import { Effect, Option } from "effect"
import { apiHttpServer } from "../src/http/node-server.js"
import {
  ADMIN_TOKEN,
  activeUser,
  baseUrl,
  call,
  eventually,
  heldRequest,
  metricNow,
  metricValue,
  newPartner,
  nodeRequest,
  piecesOf,
  type Reply,
  testServer,
} from "./harness.js"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Every error answer is the published body: entries with an id, a code and a message, nothing internal. */
const expectPublishedError = (reply: Reply, status: number, code: string) => {
  expect(reply.status).toBe(status)
  expect(reply.headers.get("content-type")).toContain("application/json")
  expect(reply.body.errors.length).toBeGreaterThan(0)
  for (const entry of reply.body.errors) {
    expect(entry.id).toMatch(uuid)
    expect(typeof entry.message).toBe("string")
    expect(entry.message).not.toMatch(/SELECT|INSERT|at .*\.ts|Error:|undefined/)
  }
  expect(reply.body.errors.map((entry: { code: string }) => entry.code)).toContain(code)
}

// A metric's value in /metrics now.
// The head of a points movement with a ~1 MiB body, which the direct write path holds the body of.
const heldMovementHead = (token: string, key: string) =>
  "POST /api/points/add HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
  `Authorization: Bearer ${token}\r\nIdempotency-Key: ${key}\r\n` +
  "Content-Length: 1048576\r\n\r\n"

// The answer to a body refused for going past the process's budget of bodies arriving, or its network's share.
const expectBodiesRefused = (answer: string, budget: "process" | "network") => {
  expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 503 Service Unavailable")
  expect(answer).toMatch(/\r\nretry-after: 2\r\n/i)
  expect(answer).toContain('"code":"SV5003"')
  expect(answer).toContain(
    budget === "process"
      ? "too many request bodies are arriving at once; retry later"
      : "too many request bodies are arriving at once from your network; retry later",
  )
}

// Raw bytes to the server and everything it sends back until it closes: for requests no HTTP client sends.
const sendRaw = (
  url: string,
  text: string,
  options: { readonly halfClose?: boolean; readonly closeAfterSending?: boolean } = {},
) =>
  Effect.async<string, Error>((resume) => {
    const { hostname, port } = new URL(url)
    // Half-closed after the text (the default), left open (then only the server can end the connection), or
    // closed as soon as the text is written.
    const socket = connect(Number(port), hostname, () => {
      if (options.closeAfterSending === true) socket.write(text, () => socket.destroy())
      else if (options.halfClose === false) socket.write(text)
      else socket.end(text)
    })
    let received = ""
    socket.setEncoding("latin1")
    socket.on("data", (chunk: string) => {
      received += chunk
    })
    socket.on("error", (error) => resume(Effect.fail(error)))
    socket.on("close", () => resume(Effect.succeed(received)))
  })

layer(testServer(), { timeout: "120 seconds", excludeTestServices: true })("The HTTP protocol", (it) => {
  it.effect(
    "answers unknown routes with 404 NN1002, and every response carries X-Request-Id and Api-Version",
    () =>
      Effect.gen(function* () {
        const reply = yield* call("GET", "/api/nothing-here", { headers: { "x-request-id": "trace-123" } })
        expectPublishedError(reply, 404, "NN1002")
        expect(reply.headers.get("x-request-id")).toBe("trace-123")
        expect(reply.headers.get("api-version")).toBeTruthy()
        const fresh = yield* call("GET", "/health/live")
        expect(fresh.status).toBe(200)
        expect(fresh.headers.get("x-request-id")).toMatch(uuid)
      }),
  )

  it.effect(
    "a client that goes away half-way through its body leaves nothing running: every request ends",
    () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const { hostname, port } = new URL(yield* baseUrl)
        const inFlight = metricNow("http_requests_in_flight")
        const before = yield* inFlight
        // Writes (which run to completion once started), the token endpoint and no route at all: each gets
        // the head and part of the body, then the connection closes. The server answers after it closed.
        for (const path of ["/api/users", "/api/points/add", "/api/oauth/token", "/no/such/route"]) {
          yield* Effect.async<void>((resume) => {
            const socket = connect(Number(port), hostname, () => {
              socket.end(
                `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
                  `Content-Type: application/json\r\nIdempotency-Key: cut-${path}\r\nContent-Length: 100\r\n\r\n{"a":`,
              )
            })
            socket.on("error", () => undefined)
            socket.on("close", () => resume(Effect.void))
            socket.resume()
          })
        }
        // Node never called back the answer written to a closed connection, and the request waited for it
        // for ever (a fiber, counted in flight); every one of them ends now.
        yield* eventually(inFlight, (count) => count === before, 10)
      }),
  )

  it.effect(
    "answers a client that half-closes its connection after a whole request, on both write paths, once",
    () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const base = yield* baseUrl
        const user = yield* activeUser(token)
        const request = (path: string, key: string, body: string) =>
          `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nIdempotency-Key: ${key}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
        const writes = [
          ["/api/users", "half-user", JSON.stringify({ partner_user_id: "half", email: "half@example.com" })],
          [
            "/api/points/add",
            "half-add",
            JSON.stringify({ transaction: { user_id: user, amount: 7, reference_id: "half-add" } }),
          ],
        ] as const
        const answeredDirectly = metricNow('direct_write_requests_total{result="answered"}')
        const direct = yield* answeredDirectly
        for (const [path, key, body] of writes) {
          // Sent whole, then the client's side of the connection shut (as nc -N does): answered, then closed.
          const answer = yield* sendRaw(base, request(path, key, body))
          expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 201 Created")
          // Its retry gets the recorded answer: the write ran, once.
          const retry = yield* call("POST", path, {
            token,
            body,
            headers: { "content-type": "application/json", "idempotency-key": key },
          })
          expect(retry.status).toBe(201)
          expect(retry.headers.get("idempotent-replayed")).toBe("true")
        }
        // The movement was the direct write path's to answer, the retry the platform's (a replay).
        expect(yield* answeredDirectly).toBe(direct + 1)
        const account = yield* call("GET", `/api/users/${user}/points-account`, { token })
        expect(account.body.balance).toBe(7)
        const users = yield* call("GET", "/api/users?partner_user_id=half", { token })
        expect(users.body.data).toHaveLength(1)
      }),
  )

  it.scoped(
    "refuses a request without good credentials before its body arrives: none is held in memory",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        for (const [path, authorization, code] of [
          ["/api/users", "", "GH1003"],
          [
            "/api/points/add",
            "Authorization: Bearer pos_at_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n",
            "GH1003",
          ],
          ["/admin/api/partners", "Authorization: Bearer not-the-admin-token-at-all\r\n", "GH1003"],
          ["/no/such/route", "", "NN1002"],
        ] as const) {
          // Most of a 1 MiB body, the rest never sent: the answer came only once the body was complete.
          const held = yield* heldRequest(
            base,
            `POST ${path} HTTP/1.1\r\nHost: x\r\n${authorization}Content-Type: application/json\r\n` +
              "Content-Length: 1048576\r\n\r\n",
            500_000,
          )
          const answer = yield* Effect.promise(() => held.answer)
          expect(answer).toContain(`"code":"${code}"`)
          held.close()
        }
      }),
  )

  it.scoped("refuses a chunked body past 1 MiB that nobody reads (its token unknown), and stays up", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      // Its token is looked up while the body arrives: nobody reads it, and it goes over the limit meanwhile.
      const chunked = yield* heldRequest(
        base,
        `POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer pos_at_${"C".repeat(43)}\r\n` +
          "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
          `100000\r\n${"a".repeat(0x100000)}\r\n100\r\n${"a".repeat(0x100)}\r\n`,
        0,
      )
      const reply = yield* Effect.promise(() => chunked.answer)
      expect(reply.split("\r\n")[0]).toMatch(/^HTTP\/1\.1 (401|413) /)
      expect((yield* call("GET", "/health/live")).status).toBe(200)
    }),
  )

  it.scoped(
    "bounds the bodies held while they arrive: past 64 MiB a body is refused 503 SV5003, then taken again",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        // A partner whose token the process holds (a first request checked it).
        const partner = yield* newPartner()
        yield* call("GET", "/api/users", { token: partner.token })
        const arriving = metricNow("http_request_body_bytes_arriving")
        // A body with a good token is read before its route: 64 bodies of ~1 MiB held, eight from each of
        // eight addresses (each network's share is 8 MiB).
        const head =
          `POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${partner.token}\r\n` +
          "Content-Type: application/json\r\nContent-Length: 1048576\r\n\r\n"
        const held = []
        for (let n = 0; n < 64; n++) {
          held.push(yield* heldRequest(base, head, 1_048_000, `127.0.0.${1 + Math.floor(n / 8)}`))
        }
        yield* eventually(arriving, (bytes) => bytes >= 64 * 1_048_000, 30)
        // From a ninth address, whose share is untouched: the process's budget refuses it.
        const refused = yield* heldRequest(base, head, 1_048_000, "127.0.0.9")
        const answer = yield* Effect.promise(() => refused.answer)
        expectBodiesRefused(answer, "process")
        // Bodies nobody reads run out of room too (a path that names no route, a token still being looked
        // up): each request is answered and the process stays up (an 'error' event nobody listened to ended
        // it, with every request in flight).
        for (const [path, authorization] of [
          ["/no/such/route", ""],
          ["/api/users", `Authorization: Bearer pos_at_${"B".repeat(43)}\r\n`],
        ] as const) {
          const unread = yield* heldRequest(
            base,
            `POST ${path} HTTP/1.1\r\nHost: x\r\n${authorization}Content-Type: application/json\r\n` +
              "Content-Length: 100000\r\n\r\n",
            100_000,
            "127.0.0.9",
          )
          const reply = yield* Effect.promise(() => unread.answer)
          expect(reply.split("\r\n")[0], path).toMatch(/^HTTP\/1\.1 (401|404|503) /)
          unread.close()
        }
        expect((yield* call("GET", "/health/live")).status).toBe(200)
        // A points movement the direct write path holds the body of is refused alike, before anything ran.
        const directAnswers = () =>
          Effect.map(call("GET", "/metrics"), (reply) =>
            metricValue(reply.text, 'direct_write_requests_total{result="answered"}'),
          )
        const answeredBefore = yield* directAnswers()
        const movement = yield* heldRequest(
          base,
          heldMovementHead(partner.token, "over-budget"),
          1_048_000,
          "127.0.0.9",
        )
        const movementAnswer = yield* Effect.promise(() => movement.answer)
        expectBodiesRefused(movementAnswer, "process")
        expect(movementAnswer).toMatch(/\r\nx-request-id: \S+\r\n/i)
        expect(yield* directAnswers()).toBe(answeredBefore + 1)
        // Their bodies gone, the budget is free again.
        for (const one of [...held, refused, movement]) one.close()
        yield* eventually(arriving, (bytes) => bytes === 0, 30)
        const token = yield* call("POST", "/api/oauth/token", {
          body: "grant_type=client_credentials&client_id=nobody&client_secret=nothing",
          headers: { "content-type": "application/x-www-form-urlencoded" },
        })
        expect(token.status).toBe(401)
      }),
  )

  it.scoped(
    "holds at most 8 MiB of bodies from one network: its next body is 503 SV5003, another network's is read",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const partner = yield* newPartner()
        yield* call("GET", "/api/users", { token: partner.token })
        const arriving = metricNow("http_request_body_bytes_arriving")
        const networks = metricNow("http_request_body_networks_arriving")
        const head =
          `POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${partner.token}\r\n` +
          "Content-Type: application/json\r\nContent-Length: 1048576\r\n\r\n"
        // Eight bodies of ~1 MiB from one address, sent slowly (never finished): its whole share.
        const held = []
        for (let n = 0; n < 8; n++) held.push(yield* heldRequest(base, head, 1_048_000, "127.0.0.21"))
        yield* eventually(arriving, (bytes) => bytes >= 8 * 1_048_000, 30)
        expect(yield* networks).toBe(1)
        const refused = yield* heldRequest(base, head, 1_048_000, "127.0.0.21")
        const answer = yield* Effect.promise(() => refused.answer)
        expectBodiesRefused(answer, "network")
        // A points movement, which the direct write path holds the body of, is refused alike.
        const movement = yield* heldRequest(
          base,
          heldMovementHead(partner.token, "over-share"),
          1_048_000,
          "127.0.0.21",
        )
        const movementAnswer = yield* Effect.promise(() => movement.answer)
        expectBodiesRefused(movementAnswer, "network")
        // The same body from another address is read in full and answered by its route (it is not JSON).
        const other = yield* heldRequest(
          base,
          head.replace("Content-Length: 1048576", "Content-Length: 1048000"),
          1_048_000,
          "127.0.0.22",
        )
        const otherAnswer = yield* Effect.promise(() => other.answer)
        expect(otherAnswer.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request")
        expect(otherAnswer).toContain('"code":"GH1006"')
        // Its bodies gone, the network holds nothing and has no entry left.
        for (const one of [...held, refused, movement, other]) one.close()
        yield* eventually(arriving, (bytes) => bytes === 0, 30)
        expect(yield* networks).toBe(0)
        // And the network's next body is read again.
        const again = yield* heldRequest(
          base,
          head.replace("Content-Length: 1048576", "Content-Length: 1048000"),
          1_048_000,
          "127.0.0.21",
        )
        expect((yield* Effect.promise(() => again.answer)).split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request")
      }),
  )

  it.scoped("answers 408 to a request that does not arrive in full in time, and closes its connection", () =>
    Effect.gen(function* () {
      // The API's own server (its time limit shortened): Node answers before any route.
      const server = apiHttpServer(1_000)
      // A route waiting for the body answers once it has it; one refused before its body answers at once.
      server.on("request", (request, response) => {
        if (request.url === "/refused") response.writeHead(401).end()
        else request.resume().once("end", () => response.end())
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => {
          server.listen(0, "127.0.0.1", () => resume(Effect.void))
        }),
        () => Effect.sync(() => server.close()),
      )
      const { port } = server.address() as AddressInfo
      const raw = yield* sendRaw(
        `http://127.0.0.1:${port}`,
        "POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
        { halfClose: false },
      )
      const [head = "", body = ""] = raw.split("\r\n\r\n")
      expect(head.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout")
      expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i)
      expect(JSON.parse(body).errors).toEqual([
        {
          id: expect.stringMatching(uuid),
          code: "GH1006",
          message: "invalid params: the request did not arrive in full in time",
        },
      ])
      // Already answered: the connection closes at the limit with no second, stray answer.
      const refused = yield* sendRaw(
        `http://127.0.0.1:${port}`,
        "POST /refused HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
        { halfClose: false },
      )
      expect(refused.match(/HTTP\/1\.1 /g)).toHaveLength(1)
      expect(refused.split("\r\n")[0]).toBe("HTTP/1.1 401 Unauthorized")
    }),
  )

  it.effect("refuses missing, malformed and unknown tokens with 401 GH1003 and a Bearer challenge", () =>
    Effect.gen(function* () {
      for (const token of [undefined, "garbage", "pos_at_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]) {
        const reply = yield* call("GET", "/api/users", token === undefined ? {} : { token })
        expectPublishedError(reply, 401, "GH1003")
        // RFC 6750 3.1: no error code when the request carried no credentials.
        expect(reply.headers.get("www-authenticate")).toBe(
          token === undefined ? 'Bearer realm="points"' : 'Bearer realm="points", error="invalid_token"',
        )
      }
    }),
  )

  it.effect("refuses a request with two Authorization fields, whichever is good", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const { token } = yield* newPartner()
      for (const path of ["/api/users", "/api/oauth/token"]) {
        const raw = yield* sendRaw(
          base,
          `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
            "Authorization: Bearer another\r\nConnection: close\r\n\r\n",
        )
        expect(raw.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request")
        expect(raw).toContain("the Authorization header is sent more than once")
      }
    }),
  )

  it.effect(
    "names no error in the challenge to an Authorization header of another scheme (RFC 6750 3.1)",
    () =>
      Effect.gen(function* () {
        for (const authorization of ["Basic Zm9vOmJhcg==", "Token abc"]) {
          const reply = yield* call("GET", "/api/users", { headers: { authorization } })
          expectPublishedError(reply, 401, "GH1003")
          expect(reply.headers.get("www-authenticate")).toBe('Bearer realm="points"')
        }
        const badBearer = yield* call("GET", "/api/users", { headers: { authorization: "Bearer abc" } })
        expect(badBearer.headers.get("www-authenticate")).toBe('Bearer realm="points", error="invalid_token"')
      }),
  )

  it.effect("answers requests Node cannot parse in the published format, with the common headers", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const cases = [
        ["GET /api/users HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400],
        ["GET /api/users HTTP/1.1\r\nHo st: x\r\n\r\n", 400],
        [`GET /api/users HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 431],
        // No Host: Node answered that one itself too (its check is off; the middleware answers it).
        ["GET /api/users HTTP/1.1\r\nConnection: close\r\n\r\n", 400],
      ] as const
      for (const [request, status] of cases) {
        const raw = yield* sendRaw(base, request)
        const [head = "", body = ""] = raw.split("\r\n\r\n")
        // Node's own answer was the bare status line: no body, no X-Request-Id, no Api-Version.
        expect(head.split("\r\n")[0]).toBe(
          `HTTP/1.1 ${status} ${status === 431 ? "Request Header Fields Too Large" : "Bad Request"}`,
        )
        expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i)
        expect(head.toLowerCase()).toContain(`\r\napi-version: ${API_VERSION.toLowerCase()}\r\n`)
        const parsed = JSON.parse(body)
        expect(parsed.errors).toHaveLength(1)
        expect(parsed.errors[0]).toMatchObject({ code: "GH1006", id: expect.stringMatching(uuid) })
      }
    }),
  )

  it.effect("answers CONNECT, which it tunnels nowhere, as an unknown route in the published format", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      for (const target of ["example.com:443", "/api/users"]) {
        // Node closed the connection without a word: no "connect" listener.
        const raw = yield* sendRaw(base, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`, {
          halfClose: false,
        })
        const [head = "", body = ""] = raw.split("\r\n\r\n")
        expect(head.split("\r\n")[0]).toBe("HTTP/1.1 404 Not Found")
        expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i)
        expect(head.toLowerCase()).toContain(`\r\napi-version: ${API_VERSION.toLowerCase()}\r\n`)
        expect(JSON.parse(body).errors).toEqual([
          { id: expect.stringMatching(uuid), code: "NN1002", message: "route not found" },
        ])
      }
    }),
  )

  it.effect(
    "answers a request once when its body breaks after its answer; a broken next request is answered",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        // Refused (415) before its body is read; then the chunked body turns out malformed.
        const refused = yield* sendRaw(
          base,
          "POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        )
        expect(refused.match(/HTTP\/1\.1 /g)).toHaveLength(1)
        expect(refused.split("\r\n")[0]).toBe("HTTP/1.1 415 Unsupported Media Type")
        // A request answered in full, then a malformed one on the same connection: each gets its answer.
        const twice = yield* sendRaw(
          base,
          "GET /health/live HTTP/1.1\r\nHost: x\r\n\r\nPOST /api/users HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        )
        expect(twice.match(/HTTP\/1\.1 \d+/g)).toEqual(["HTTP/1.1 200", "HTTP/1.1 400"])
      }),
  )

  it.effect(
    "answers requests Node cannot parse on the OAuth endpoints with no-store and RFC 6749 `error` fields",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const cases = [
          ["/api/oauth/token", "Content-Length: 1\r\nContent-Length: 2\r\n", 400, "malformed HTTP request"],
          [
            "/api/oauth/revoke",
            `X-Big: ${"a".repeat(20_000)}\r\n`,
            431,
            "invalid params: the request's headers are too large",
          ],
          ["/api/users", "Content-Length: 1\r\nContent-Length: 2\r\n", 400, "malformed HTTP request"],
        ] as const
        for (const [path, headers, status, message] of cases) {
          const raw = yield* sendRaw(base, `POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`)
          const [head = "", body = ""] = raw.split("\r\n\r\n")
          expect(head.split("\r\n")[0]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
          const parsed = JSON.parse(body)
          expect(parsed.errors[0]).toMatchObject({ code: "GH1006", message })
          if (path === "/api/users") {
            expect(parsed.error).toBeUndefined()
            expect(head.toLowerCase()).not.toContain("cache-control")
            continue
          }
          expect(parsed).toMatchObject({ error: "invalid_request", error_description: message })
          expect(head.toLowerCase()).toContain("\r\ncache-control: no-store\r\n")
          expect(head.toLowerCase()).toContain("\r\npragma: no-cache\r\n")
        }
      }),
  )

  it.effect(
    "refuses a query string that is not percent-encoded UTF-8 (read as U+FFFD, it filtered on text never sent)",
    () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        for (const query of [
          "/api/users?partner_user_id=%FF",
          "/api/orders?reference_id=%ED%A0%80",
          "/api/points/transactions?reference_id=%E2%82",
          "/api/events?limit=5&x=%zz",
        ]) {
          const reply = yield* call("GET", query, { token })
          expectPublishedError(reply, 400, "GH1006")
          expect(reply.body.errors[0].message).toBe(
            "invalid params: the query string is not percent-encoded UTF-8",
          )
        }
        // Well-formed text in any script is a filter like any other.
        expect(
          (yield* call("GET", "/api/users?partner_user_id=caf%C3%A9+%F0%9F%98%80", { token })).status,
        ).toBe(200)
      }),
  )

  it.effect("closes the connection after refusing a request without Host (not valid HTTP/1.1)", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      // A second request follows on the same connection, which the client leaves open: it is never read.
      const raw = yield* sendRaw(
        base,
        "GET /health/live HTTP/1.1\r\n\r\nGET /health/live HTTP/1.1\r\nHost: x\r\n\r\n",
        { halfClose: false },
      ).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("never closed") }))
      expect(raw.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 400"])
      expect(raw.toLowerCase()).toContain("\r\nconnection: close\r\n")
    }),
  )

  it.effect(
    "a pipelined request whose connection closes before its turn to be answered leaves nothing running",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const inFlight = metricNow("http_requests_in_flight")
        const before = yield* inFlight
        const { hostname } = new URL(base)
        const live = `GET /health/live HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`
        // The server closes the connection after its first answer (a request without Host), or the client goes
        // away as soon as it has sent three requests: the answers queued behind the first are never written.
        yield* sendRaw(base, `GET /health/live HTTP/1.1\r\n\r\n${live}${live}`, { halfClose: false })
        yield* sendRaw(base, `${live}${live}${live}`, { closeAfterSending: true })
        // Node never closed an answer that never had the connection, nor called back its end, and the request
        // waited for it for ever (a fiber, counted in flight); each one ends now.
        yield* eventually(inFlight, (count) => count === before, 10)
      }),
  )

  it.effect(
    "refuses a body that is not UTF-8 with 400 GH1006 and creates nothing; a body a route ignores stays ignored",
    () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const base = yield* baseUrl
        const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
        const json = (text: string) => Buffer.from(text, "utf8")
        // Node's decoding read these bytes as U+FFFD: the user was created with text the client never sent.
        const bad = yield* nodeRequest(`${base}/api/users`, {
          method: "POST",
          headers,
          chunks: [
            json('{"partner_user_id":"bad'),
            Buffer.from([0xff, 0xfe]),
            json('","email":"nu@example.com"}'),
          ],
        })
        expect(bad.status).toBe(400)
        expect(JSON.parse(bad.text).errors).toEqual([
          expect.objectContaining({ code: "GH1006", message: "invalid params: the body is not valid UTF-8" }),
        ])
        // A character split between two chunks is still one character.
        const e = json("é")
        const split = yield* nodeRequest(`${base}/api/users`, {
          method: "POST",
          headers,
          chunks: [
            Buffer.concat([json('{"partner_user_id":"caf'), e.subarray(0, 1)]),
            Buffer.concat([e.subarray(1), json('","email":"cafe@example.com"}')]),
          ],
        })
        expect(split.status).toBe(201)
        expect(JSON.parse(split.text).partner_user_id).toBe("café")
        const users = yield* call("GET", "/api/users", { token })
        expect(users.body.data.map((user: { partner_user_id: string }) => user.partner_user_id)).toEqual([
          "café",
        ])
        // GET takes no body: one that is not UTF-8 is ignored, as any body there is.
        const ignored = yield* nodeRequest(`${base}/api/users`, {
          method: "GET",
          headers,
          chunks: [Buffer.from([0xff])],
        })
        expect(ignored.status).toBe(200)
      }),
  )

  it.effect(
    "refuses a body in a content coding (gzip, ...) with 415 GH1010 naming it, nothing run; identity is none",
    () =>
      Effect.gen(function* () {
        const { clientId, token } = yield* newPartner()
        const base = yield* baseUrl
        const json = { authorization: `Bearer ${token}`, "content-type": "application/json" }
        const body = JSON.stringify({ partner_user_id: "zipped", email: "zip@example.com" })
        // Compressed, it was read as its raw bytes: 400 GH1006 "the body is not valid UTF-8".
        const zipped = yield* nodeRequest(`${base}/api/users`, {
          method: "POST",
          headers: { ...json, "content-encoding": "gzip", "idempotency-key": "zipped-1" },
          chunks: [gzipSync(body)],
        })
        expectPublishedError(zipped, 415, "GH1010")
        expect(zipped.body.errors[0].message).toBe(
          "Content-Encoding gzip is not supported: send the body uncompressed",
        )
        // Every route that takes a body, the token endpoint too (with RFC 6749's fields); codings as sent.
        const add = yield* nodeRequest(`${base}/api/points/add`, {
          method: "POST",
          headers: { ...json, "content-encoding": "identity, BR" },
          chunks: ['{"transaction":{}}'],
        })
        expectPublishedError(add, 415, "GH1010")
        expect(add.body.errors[0].message).toBe(
          "Content-Encoding BR is not supported: send the body uncompressed",
        )
        const tokenRequest = yield* nodeRequest(`${base}/api/oauth/token`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", "content-encoding": "deflate" },
          chunks: [deflateSync(`grant_type=client_credentials&client_id=${clientId}`)],
        })
        expectPublishedError(tokenRequest, 415, "GH1010")
        expect(tokenRequest.body.error).toBe("invalid_request")
        // Nothing ran, and the key is unused: sent uncompressed, or said to be `identity`, the body is taken.
        expect((yield* call("GET", "/api/users?partner_user_id=zipped", { token })).body.data).toEqual([])
        const plain = yield* nodeRequest(`${base}/api/users`, {
          method: "POST",
          headers: { ...json, "content-encoding": "Identity", "idempotency-key": "zipped-1" },
          chunks: [body],
        })
        expect(plain.status).toBe(201)
        // A route that takes no body ignores one, whatever its coding.
        const user = yield* activeUser(token)
        const opened = yield* nodeRequest(`${base}/api/users/${user}/points-account`, {
          method: "POST",
          headers: { ...json, "content-encoding": "gzip" },
          chunks: [gzipSync("{}")],
        })
        expect(opened.status).toBe(201)
      }),
  )

  it.effect(
    "routes a request target in absolute form by its path, and an id of any length to its route",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const { token } = yield* newPartner()
        const { hostname, port } = new URL(base)
        const raw = yield* sendRaw(
          base,
          `GET http://${hostname}:${port}/api/users?limit=1 HTTP/1.1\r\nHost: ${hostname}\r\n` +
            `Authorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
          { halfClose: false },
        )
        expect(raw.split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
        expect(raw).toContain('"data":[]')
        // Past the router's default limit of 100 characters an id named no route (NN1002), and no token was asked.
        for (const length of [100, 101, 5000]) {
          const path = `/api/users/${"a".repeat(length)}`
          expectPublishedError(yield* call("GET", path, { token }), 404, "LE0002")
          expectPublishedError(yield* call("GET", path), 401, "GH1003")
        }
      }),
  )

  it.effect("matches paths exactly as the contract spells them: case, slashes and `;` name no route", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const user = yield* activeUser(token)
      const form = {
        token,
        body: "partner_user_id=form-user&email=f@x",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      }
      // Each variant used to reach the route while skipping the media-type check (201 for a form body).
      for (const path of [
        "/API/users",
        "/api/users/",
        "/api//users",
        "/Api/Users",
        `/api/users//points-account`,
      ]) {
        expectPublishedError(yield* call("POST", path, form), 404, "NN1002")
      }
      expectPublishedError(yield* call("POST", "/api/users", form), 415, "GH1010")
      // The router decodes a percent-encoded letter: the same route, checked as its plain spelling is.
      expectPublishedError(yield* call("POST", "/api/%75sers", form), 415, "GH1010")
      const listed = yield* call("GET", "/api/users?partner_user_id=form-user", { token })
      expect(listed.body.data).toEqual([])
      // `;` ended the path for the router: this closed the user.
      expectPublishedError(yield* call("DELETE", `/api/users/${user};junk`, { token }), 404, "NN1002")
      expectPublishedError(yield* call("GET", `/api/users/${user};x=1`, { token }), 404, "NN1002")
      expectPublishedError(yield* call("GET", `/api/users/${user}/`, { token }), 404, "NN1002")
      // An empty segment was an empty id for the router: Get user "" (404 LE0002), and no media-type check.
      expectPublishedError(yield* call("GET", "/api/users/", { token }), 404, "NN1002")
      expectPublishedError(yield* call("PATCH", "/api/users/", form), 404, "NN1002")
      expectPublishedError(yield* call("POST", "/api/orders//cancel", { token }), 404, "NN1002")
      const unchanged = yield* call("GET", `/api/users/${user}`, { token })
      expect(unchanged.status).toBe(200)
      expect(unchanged.body.status).toBe("active")
    }),
  )

  it.effect(
    "takes a token only under the Bearer scheme (any case, one or more spaces), on /api and /admin/api",
    () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const asHeader = (authorization: string, path = "/api/users") =>
          call("GET", path, { headers: { authorization } })
        for (const authorization of [`Bearer ${token}`, `bearer ${token}`, `BEARER  ${token}`]) {
          expect((yield* asHeader(authorization)).status).toBe(200)
        }
        // Seven characters of anything before the token used to pass: the scheme was never read. Only a
        // Bearer header's challenge names an error (RFC 6750 3.1).
        for (const [authorization, challenge] of [
          [`Token: ${token}`, 'Bearer realm="points"'],
          [`XXXXXXX${token}`, 'Bearer realm="points"'],
          [`Basic  ${token}`, 'Bearer realm="points"'],
          [`Bearer`, 'Bearer realm="points", error="invalid_token"'],
          [token, 'Bearer realm="points"'],
        ] as const) {
          const reply = yield* asHeader(authorization)
          expectPublishedError(reply, 401, "GH1003")
          expect(reply.headers.get("www-authenticate")).toBe(challenge)
        }
        expect((yield* asHeader(`Bearer ${ADMIN_TOKEN}`, "/admin/api/partners")).status).toBe(200)
        for (const authorization of [
          `Basic  ${ADMIN_TOKEN}`,
          `Token: ${ADMIN_TOKEN}`,
          `Bearer ${ADMIN_TOKEN}x`,
        ]) {
          const reply = yield* asHeader(authorization, "/admin/api/partners")
          expectPublishedError(reply, 401, "GH1003")
          expect(reply.headers.get("www-authenticate")).toContain("Bearer")
        }
      }),
  )

  it.effect(
    "issues tokens from a form, from JSON and from HTTP Basic, with no-store; refuses bad clients",
    () =>
      Effect.gen(function* () {
        const { clientId, clientSecret } = yield* newPartner()
        const form = yield* call("POST", "/api/oauth/token", {
          body: `grant_type=client_credentials&client_id=${clientId}&client_secret=${encodeURIComponent(clientSecret)}`,
          headers: { "content-type": "application/x-www-form-urlencoded" },
        })
        expect(form.status).toBe(200)
        expect(form.body).toMatchObject({ token_type: "Bearer" })
        expect(form.body.token).toBe(form.body.access_token)
        expect(form.headers.get("cache-control")).toBe("no-store")
        expect(form.headers.get("pragma")).toBe("no-cache")
        const json = yield* call("POST", "/api/oauth/token", {
          json: { client_id: clientId, client_secret: clientSecret },
        })
        expect(json.status).toBe(200)
        const basic = yield* call("POST", "/api/oauth/token", {
          body: "grant_type=client_credentials",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            authorization: `Basic ${Buffer.from(`${clientId}:${encodeURIComponent(clientSecret)}`).toString("base64")}`,
          },
        })
        expect(basic.status).toBe(200)
        const wrong = yield* call("POST", "/api/oauth/token", {
          json: { client_id: clientId, client_secret: "nope" },
        })
        expectPublishedError(wrong, 401, "GH1001")
        expect(wrong.body.error).toBe("invalid_client")
        const wrongBasic = yield* call("POST", "/api/oauth/token", {
          body: "grant_type=client_credentials",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            authorization: `Basic ${Buffer.from(`${clientId}:nope`).toString("base64")}`,
          },
        })
        expect(wrongBasic.status).toBe(401)
        expect(wrongBasic.headers.get("www-authenticate")).toContain("Basic")
        const grant = yield* call("POST", "/api/oauth/token", {
          json: { grant_type: "password", client_id: clientId, client_secret: clientSecret },
        })
        expectPublishedError(grant, 400, "GH1007")
        // RFC 7009: revoking works, and the token is refused afterwards.
        const revoke = yield* call("POST", "/api/oauth/revoke", {
          json: { token: json.body.access_token, client_id: clientId, client_secret: clientSecret },
        })
        expect(revoke.status).toBe(200)
        const refused = yield* call("GET", "/api/users", { token: json.body.access_token })
        expectPublishedError(refused, 401, "GH1003")
        const stillFine = yield* call("GET", "/api/users", { token: form.body.access_token })
        expect(stillFine.status).toBe(200)
      }),
  )

  it.effect("answers bad JSON, wrong media types and oversized bodies in the published format", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const badJson = yield* call("POST", "/api/users", {
        token,
        body: "{not json",
        headers: { "content-type": "application/json" },
      })
      expectPublishedError(badJson, 400, "GH1006")
      const text = yield* call("POST", "/api/users", {
        token,
        body: "hello",
        headers: { "content-type": "text/plain", "x-request-id": "req-415" },
      })
      expectPublishedError(text, 415, "GH1010")
      const huge = yield* call("POST", "/api/users", {
        token,
        body: JSON.stringify({ partner_user_id: "x".repeat(1_100_000) }),
        headers: { "content-type": "application/json", "x-request-id": "req-413" },
      })
      expectPublishedError(huge, 413, "GH1008")
      // Refused before routing, they still carry the headers every response carries (DESIGN.md section 2).
      for (const [reply, requestId] of [
        [text, "req-415"],
        [huge, "req-413"],
      ] as const) {
        expect(reply.headers.get("x-request-id")).toBe(requestId)
        expect(reply.headers.get("api-version")).toBe(API_VERSION)
      }
    }),
  )

  it.effect(
    "caps a chunked body (no Content-Length) at 1 MiB while reading it: 413 GH1008, nothing created",
    () =>
      Effect.gen(function* () {
        const { clientId, token } = yield* newPartner()
        const base = yield* baseUrl
        const body = JSON.stringify({
          partner_user_id: "chunked",
          email: "c@example.com",
          name: "x".repeat(1_100_000),
        })
        const reply = yield* nodeRequest(`${base}/api/users`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          chunks: piecesOf(body),
          chunked: true,
        })
        expect(reply.status).toBe(413)
        expect(JSON.parse(reply.text).errors[0].code).toBe("GH1008")
        expect(reply.headers.get("x-request-id")).toEqual(expect.any(String))
        const users = yield* call("GET", "/api/users", { token })
        expect(users.body.data).toEqual([])
        // The OAuth endpoints take 16 KiB at most (their bodies are read before any credential is checked),
        // chunked or not; their 413 carries the RFC 6749 fields too.
        const formOf = (secretLength: number) =>
          new URLSearchParams({
            grant_type: "client_credentials",
            client_id: clientId,
            client_secret: "x".repeat(secretLength),
          }).toString()
        const overhead = formOf(0).length
        for (const path of ["/api/oauth/token", "/api/oauth/revoke"]) {
          for (const chunked of [true, false]) {
            const token413 = yield* nodeRequest(`${base}${path}`, {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              chunks: piecesOf(formOf(16_385 - overhead)),
              chunked,
            })
            expect(token413.status, `${path} chunked ${chunked}`).toBe(413)
            expect(JSON.parse(token413.text)).toMatchObject({
              error: "invalid_request",
              errors: [{ code: "GH1008", message: "payload too large: the limit is 16384 bytes" }],
            })
          }
        }
        // 16 KiB exactly is read, and refused for what it says (a wrong secret), not for its size.
        const atLimit = yield* nodeRequest(`${base}/api/oauth/token`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          chunks: piecesOf(formOf(16_384 - overhead)),
          chunked: true,
        })
        expect(atLimit.status).toBe(401)
        expect(JSON.parse(atLimit.text).error).toBe("invalid_client")

        // A 413 is a refusal: the route never runs, and the key is not used. A write that takes no body ran
        // (its account opened) and was answered 413; a body refused as bad JSON was recorded under the key.
        const user = yield* activeUser(token)
        const oversized = (path: string, key: string) =>
          nodeRequest(`${base}${path}`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${token}`,
              "content-type": "application/json",
              "idempotency-key": key,
            },
            chunks: piecesOf(" ".repeat(1_100_000)),
            chunked: true,
          })
        const account = `/api/users/${user}/points-account`
        expect((yield* oversized(account, "big-open")).status).toBe(413)
        expectPublishedError(yield* call("GET", account, { token }), 404, "LE0002")
        const opened = yield* call("POST", account, { token, headers: { "idempotency-key": "big-open" } })
        expect(opened.status).toBe(201)
        expect(opened.headers.get("idempotent-replayed")).toBeNull()
        expect((yield* oversized("/api/points/add", "big-add")).status).toBe(413)
        const added = yield* call("POST", "/api/points/add", {
          token,
          headers: { "idempotency-key": "big-add" },
          json: { transaction: { user_id: user, amount: 5, reference_id: "big-add" } },
        })
        expect(added.status).toBe(201)
        expect(added.headers.get("idempotent-replayed")).toBeNull()
      }),
  )

  it.effect("reports every invalid field of a body, in the published words, and changes nothing", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const reply = yield* call("POST", "/api/users", { token, json: { partner_user_id: 5, email: 7 } })
      expectPublishedError(reply, 400, "GH1006")
      const messages = reply.body.errors.map((entry: { message: string }) => entry.message)
      expect(messages).toContain("partner_user_id must be a string")
      expect(messages).toContain("email must be a string")
      const points = yield* call("POST", "/api/points/add", {
        token,
        json: { transaction: { user_id: 5, amount: 1, reference_id: "r" } },
      })
      expectPublishedError(points, 400, "LE1001")
      expect(points.body.errors[0].message).toBe("transaction.user_id must be a string")
      const list = yield* call("GET", "/api/users", { token })
      expect(list.body.data).toEqual([])
    }),
  )

  it.effect("gives a 4xx in the published format, never a 5xx, for a table of hostile bodies", () =>
    Effect.gen(function* () {
      const { token } = yield* newPartner()
      const userId = yield* activeUser(token)
      const hostile: ReadonlyArray<unknown> = [
        null,
        [],
        "string",
        42,
        {},
        { transaction: null },
        { transaction: { user_id: userId, amount: -5, reference_id: "r" } },
        { transaction: { user_id: userId, amount: 1.5, reference_id: "r" } },
        { transaction: { user_id: userId, amount: 1_000_000_001, reference_id: "r" } },
        { transaction: { user_id: userId, amount: 1, reference_id: "" } },
        { transaction: { user_id: userId, amount: 1, reference_id: "x".repeat(256) } },
        { transaction: { user_id: userId, amount: 1, reference_id: "nul\u0000byte" } },
        { transaction: { user_id: "not-a-uuid", amount: 1, reference_id: "r" } },
        { partner_user_id: "p", email: "not an email" },
        { user_id: userId, reference_id: "r", items: [] },
        { user_id: userId, reference_id: "r", items: [{ sku: "A", quantity: 0, points: 1 }] },
        { user_id: userId, reference_id: "r", items: [{ sku: "A", quantity: 1000, points: 1_000_000_000 }] },
        { name: "x".repeat(201) },
        { url: "https://127.0.0.1/hook" },
        { url: `https://hooks.example.com/${"x".repeat(2048)}` },
        { url: "https://hooks.example.com/a", event_types: ["user.updated"] },
        { url: "https://hooks.example.com/a", event_types: [null] },
        { url: "https://hooks.example.com/a", description: "nul\u0000byte" },
        { url: "https://hooks.example.com/a", enabled: "yes" },
        { url: "javascript:alert(1)" },
      ]
      const endpoint = yield* call("POST", "/api/webhooks/endpoints", {
        token,
        json: { url: "https://hooks.example.com/protocol" },
      })
      const routes: ReadonlyArray<readonly [string, string, Record<string, string>]> = [
        ["POST", "/api/users", {}],
        ["PATCH", `/api/users/${userId}`, {}],
        ["POST", "/api/points/add", {}],
        ["POST", "/api/points/subtract", {}],
        ["POST", "/api/orders", { "idempotency-key": "hostile" }],
        ["POST", "/api/webhooks/endpoints", {}],
        ["PATCH", `/api/webhooks/endpoints/${endpoint.body.id}`, {}],
      ]
      for (const [method, path, headers] of routes) {
        for (const [index, body] of hostile.entries()) {
          const reply = yield* call(method, path, {
            token,
            body: JSON.stringify(body),
            headers: {
              "content-type": "application/json",
              ...headers,
              ...(headers["idempotency-key"] ? { "idempotency-key": `h-${path}-${index}` } : {}),
            },
          })
          if (reply.status >= 200 && reply.status < 300) continue // e.g. PATCH with {} changes nothing
          expect(reply.status, `${method} ${path} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400)
          expect(reply.status, `${method} ${path} ${JSON.stringify(body)}`).toBeLessThan(500)
          expect(reply.body.errors.length).toBeGreaterThan(0)
        }
      }
      const account = yield* call("GET", `/api/users/${userId}/points-account`, { token })
      expect(account.status).toBe(404)
      // Only the endpoint made above exists, unchanged by every hostile PATCH.
      const endpoints = yield* call("GET", "/api/webhooks/endpoints", { token })
      expect(endpoints.body.data).toEqual([endpoint.body].map(({ secret: _secret, ...rest }) => rest))
    }),
  )
})

layer(testServer({ adminToken: Option.none() }), { timeout: "120 seconds", excludeTestServices: true })(
  "The HTTP protocol with the admin API off",
  (it) => {
    it.effect(
      "answers everything under /admin/api 404 NN1002, before any refusal that would show its routes exist",
      () =>
        Effect.gen(function* () {
          const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
          const replies = [
            yield* call("POST", "/admin/api/partners", {
              body: "name=Acme",
              headers: { "content-type": "text/plain", "x-request-id": "admin-off" },
            }),
            yield* call("POST", "/admin/api/partners", {
              body: JSON.stringify({ name: "x".repeat(1_100_000) }),
              headers: { "content-type": "application/json", ...admin },
            }),
            yield* call("POST", "/admin/api/partners", { json: { name: "Acme" }, headers: admin }),
            yield* call("GET", "/admin/api/partners", { headers: admin }),
          ]
          for (const reply of replies) {
            expectPublishedError(reply, 404, "NN1002")
            expect(reply.body.errors[0].message).toBe("route not found")
            expect(reply.headers.get("api-version")).toBe(API_VERSION)
            expect(reply.headers.get("x-request-id")).toBeTruthy()
          }
          expect(replies[0]?.headers.get("x-request-id")).toBe("admin-off")
        }),
    )
  },
)

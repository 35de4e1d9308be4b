import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, Agent as HttpAgent, get as httpGet } from "node:http"
import { request as httpsRequest } from "node:https"
import { type AddressInfo, connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, it, layer } from "@effect/vitest"
import { databaseAt, FAILED_AUTHENTICATIONS_WINDOW_SECONDS, WriteSideLive } from "@points/infrastructure"
import { testDatabase } from "@points/infrastructure/testing"
import { ConfigProvider, Context, Deferred, Effect, Fiber, Layer, Redacted } from "effect"
import { Settings } from "../src/config.js"
import { apiHttpServer, apiServerLayer } from "../src/http/node-server.js"
import { HttpAppLive } from "../src/server.js"
import { publishedDocument } from "./contract-conformance.js"
import {
  ADMIN_TOKEN,
  baseUrl,
  call,
  eventually,
  heldRequest,
  metricNow,
  metricValue,
  newPartner,
  testSettings,
} from "./harness.js"
import {
  apiProcess,
  freePort,
  listeningProcess,
  processSettings,
  testDatabaseUrl,
  waitForOutput,
} from "./processes.js"
import { tcpProxy } from "./tcp-proxy.js"

// ---------------------------------------------------------------------------------------------------------
// Configuration

const settingsError = (values: Record<string, string>) =>
  Effect.flip(
    Effect.provide(
      Settings,
      Settings.layer.pipe(
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(values))))),
      ),
    ),
  ).pipe(Effect.map(String))

it.effect("validates the configuration at start, with a message naming each bad variable", () =>
  Effect.gen(function* () {
    expect(yield* settingsError({ PORT: "abc" })).toMatch(/PORT.*abc/)
    expect(yield* settingsError({ RATE_LIMIT_BURST: "0" })).toMatch(/RATE_LIMIT_BURST.*from 1 to/)
    expect(yield* settingsError({ TOKEN_RATE_LIMIT_PER_ADDRESS: "-1" })).toMatch(
      /TOKEN_RATE_LIMIT_PER_ADDRESS.*from 0 to 100000/,
    )
    expect(yield* settingsError({ AUTH_FAILURE_LIMIT_PER_ADDRESS: "ten" })).toMatch(
      /AUTH_FAILURE_LIMIT_PER_ADDRESS/,
    )
    const shortToken = yield* settingsError({ ADMIN_TOKEN: "short-secret" })
    expect(shortToken).toContain('at ADMIN_TOKEN: "must be at least 16 characters')
    expect(shortToken).not.toContain("short-secret")
    // Each names its variable: a redacted value's and a pair's failures named none ("Invalid data at : …").
    expect(yield* settingsError({ TLS_CERT_FILE: "/tmp/cert.pem" })).toContain(
      'at TLS_KEY_FILE: "must be set with TLS_CERT_FILE',
    )
    expect(yield* settingsError({ TLS_KEY_FILE: "/tmp/key.pem" })).toContain(
      'at TLS_CERT_FILE: "must be set with TLS_KEY_FILE',
    )
    // The pair is checked with the rest: one start names both problems.
    const pairAndPort = yield* settingsError({ TLS_CERT_FILE: "/tmp/cert.pem", PORT: "abc" })
    expect(pairAndPort).toContain('at TLS_KEY_FILE: "must be set with TLS_CERT_FILE')
    expect(pairAndPort).toMatch(/PORT.*abc/)
    for (const host of ["not_a_host", "a..b", "-lead.example", "x".repeat(64)]) {
      expect(yield* settingsError({ HOST: host })).toContain('at HOST: "must be an IP address or a host name')
    }
    for (const host of ["127.0.0.1", "::", "localhost", "api-1.internal.example"]) {
      expect(yield* settingsError({ HOST: host, PORT: "abc" })).not.toContain("HOST")
    }
    // Every bad value at once: one message names them all.
    const all = yield* settingsError({
      PORT: "abc",
      RATE_LIMIT_BURST: "0",
      TOKEN_TTL_SECONDS: "soon",
      ADMIN_TOKEN: "short-secret",
    })
    for (const name of ["PORT", "RATE_LIMIT_BURST", "TOKEN_TTL_SECONDS", "ADMIN_TOKEN"]) {
      expect(all).toContain(name)
    }
  }),
)

// ---------------------------------------------------------------------------------------------------------
// The real process: HTTPS, JSON logs, graceful shutdown

/** A temporary directory holding a self-signed certificate for 127.0.0.1 and localhost, removed after. */
const selfSignedCertificate = Effect.acquireRelease(
  Effect.sync(() => {
    const directory = mkdtempSync(join(tmpdir(), "points-tls-"))
    const cert = join(directory, "cert.pem")
    const key = join(directory, "key.pem")
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-days", "1"].concat([
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
        "-keyout",
        key,
        "-out",
        cert,
      ]),
      { stdio: "ignore", timeout: 15_000 },
    )
    return { directory, cert, key, ca: readFileSync(cert) }
  }),
  ({ directory }) => Effect.sync(() => rmSync(directory, { recursive: true, force: true })),
)

interface HttpsReply {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly text: string
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON.
  readonly body: any
}

/** An HTTPS request to 127.0.0.1:port, trusting `ca` only (no `ca`: the system's roots). */
const httpsCall = (
  port: number,
  ca: Buffer | undefined,
  method: string,
  path: string,
  options: { readonly headers?: Record<string, string>; readonly json?: unknown } = {},
) =>
  Effect.async<HttpsReply, Error>((resume) => {
    const body = options.json === undefined ? undefined : JSON.stringify(options.json)
    const request = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent: false,
        ...(ca === undefined ? {} : { ca }),
        headers: {
          ...options.headers,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
      },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => {
          text += chunk
        })
        response.on("end", () => {
          let parsed: unknown = null
          try {
            parsed = text === "" ? null : JSON.parse(text)
          } catch {
            parsed = null
          }
          resume(
            Effect.succeed({
              status: response.statusCode ?? 0,
              headers: response.headers,
              text,
              body: parsed,
            }),
          )
        })
      },
    )
    request.once("error", (error) => resume(Effect.fail(error)))
    request.end(body)
  })

/**
 * A POST whose headers are sent (`Expect: 100-continue`) and whose body waits for `finish`: once `continued`
 * resolves, the server has parsed the headers and is handling the request.
 */
const slowRequest = (
  port: number,
  ca: Buffer,
  path: string,
  headers: Record<string, string>,
  body: string,
) => {
  const request = httpsRequest({
    host: "127.0.0.1",
    port,
    method: "POST",
    path,
    ca,
    agent: false,
    headers: {
      ...headers,
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      expect: "100-continue",
      connection: "close",
    },
  })
  const continued = new Promise<void>((resolve, reject) => {
    request.once("continue", resolve)
    request.once("error", reject)
  })
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    request.once("response", (reply) => {
      let text = ""
      reply.setEncoding("utf8")
      reply.on("data", (chunk: string) => {
        text += chunk
      })
      reply.on("end", () => resolve({ status: reply.statusCode ?? 0, text }))
    })
    request.once("error", reject)
  })
  request.flushHeaders()
  return { continued, response, finish: () => request.end(body) }
}

/** True once nothing accepts connections on the port. */
const refusesConnections = (port: number) =>
  Effect.promise(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, "127.0.0.1")
        socket.once("connect", () => {
          socket.destroy()
          resolve(false)
        })
        socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"))
      }),
  )

const jsonLines = (text: string) =>
  text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { message: unknown; annotations: Record<string, unknown> })

layer(testDatabase(), { timeout: "120 seconds", excludeTestServices: true })("The API process", (it) => {
  it.scoped("on an IPv6 address, says where it listens as a URL writes it (http://[::1]:port)", () =>
    Effect.gen(function* () {
      const { env } = yield* processSettings({ HOST: "::1" })
      const base = `http://[::1]:${env.PORT}`
      yield* listeningProcess(env, base)
      expect((yield* Effect.promise(() => fetch(`${base}/health/live`))).status).toBe(200)
    }),
  )

  it.scoped("on SIGTERM answers busy kept-alive connections with Connection: close and cuts none", () =>
    Effect.gen(function* () {
      const { base, env } = yield* processSettings()
      const api = yield* listeningProcess(env, base)
      // Clients that keep their connection busy: each sends its next request as soon as it has an answer.
      const agent = new HttpAgent({ keepAlive: true, maxSockets: 8 })
      yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
      const get = () =>
        new Promise<{ readonly status: number; readonly connection: string | undefined }>(
          (resolve, reject) => {
            httpGet(`${base}/health/live`, { agent }, (response) => {
              response.resume()
              response.once("end", () =>
                resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }),
              )
            }).once("error", reject)
          },
        )
      let signalled = false
      let answered = 0
      const closeAnswers: Array<number> = []
      const busyClient = async () => {
        for (;;) {
          try {
            const answer = await get()
            answered += 1
            if (signalled && answer.connection === "close") closeAnswers.push(answer.status)
          } catch (error) {
            // How a client's loop may end: its next connection refused. A reset or a hang up cut a request.
            return (error as NodeJS.ErrnoException).code
          }
        }
      }
      const clients = Array.from({ length: 8 }, busyClient)
      // Every connection accepted and reused (one still in the listen queue when the socket closes is reset by
      // the kernel, before the server ever sees it).
      yield* eventually(
        Effect.sync(() => answered),
        (count) => count >= 32,
      )
      signalled = true
      api.child.kill("SIGTERM")
      const endings = yield* Effect.promise(() => Promise.all(clients))
      expect(endings).toEqual(Array.from({ length: 8 }, () => "ECONNREFUSED"))
      expect(closeAnswers.length).toBeGreaterThanOrEqual(8)
      expect(closeAnswers.every((status) => status === 200)).toBe(true)
      expect(yield* Effect.promise(() => api.exit)).toBe(0)
    }),
  )

  it.scoped("refuses to start in one line an operator can act on, naming the setting, with no stack", () =>
    Effect.gen(function* () {
      const databaseUrl = yield* testDatabaseUrl
      const certificate = yield* selfSignedCertificate
      // A port someone else listens on.
      const taken = createServer()
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => {
          taken.listen(0, "127.0.0.1", () => resume(Effect.void))
        }),
        () => Effect.sync(() => taken.close()),
      )
      const takenPort = (taken.address() as AddressInfo).port
      const closedPort = yield* freePort
      // The API's entry unless a case names another: `npm start`'s (src/platform.ts) says "the platform".
      const cases: ReadonlyArray<readonly [Record<string, string>, string, entry?: string]> = [
        [
          { PORT: String(takenPort) },
          `cannot listen on 127.0.0.1:${takenPort} (HOST, PORT): listen EADDRINUSE`,
        ],
        [
          { TLS_CERT_FILE: "/nonexistent/cert.pem", TLS_KEY_FILE: certificate.key },
          "TLS_CERT_FILE (/nonexistent/cert.pem) cannot be read: ENOENT",
        ],
        [
          { TLS_CERT_FILE: certificate.key, TLS_KEY_FILE: certificate.key },
          "TLS_CERT_FILE and TLS_KEY_FILE are not a certificate and its private key",
        ],
        [
          { DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/none` },
          `the database (DATABASE_URL, or the embedded server) cannot be used: connect ECONNREFUSED 127.0.0.1:${closedPort}`,
        ],
        [
          { DATABASE_URL: "notaurl" },
          'bad settings: (Invalid data at DATABASE_URL: "must be a postgres:// or postgresql:// URL',
        ],
        // Read by the API's settings and by the projections': named once all the same.
        [
          { WEBHOOK_ALLOW_PRIVATE_TARGETS: "maybe" },
          'bad settings: (Invalid data at WEBHOOK_ALLOW_PRIVATE_TARGETS: "Expected a boolean value but received "maybe"")',
          "src/platform.ts",
        ],
      ]
      // Two at a time: each process spends seconds loading the sources before it refuses, and six in a row
      // outlasted the test's minute on a loaded machine.
      yield* Effect.forEach(
        cases,
        ([env, problem, entry]) =>
          Effect.gen(function* () {
            const api = yield* apiProcess(
              {
                PORT: String(yield* freePort),
                HOST: "127.0.0.1",
                DATABASE_URL: databaseUrl,
                LOG_LEVEL: "info",
                ...env,
              },
              entry,
            )
            expect(yield* Effect.promise(() => api.exit)).toBe(1)
            const refusal = jsonLines(api.stdout()).find((line) =>
              String(line.message).includes("could not start"),
            )
            const service = entry === "src/platform.ts" ? "the platform" : "the API"
            expect(refusal?.message).toContain(`${service} could not start: ${problem}`)
            expect(String(refusal?.message).match(/Invalid data at/g)?.length ?? 0).toBeLessThanOrEqual(1)
            expect(api.stdout() + api.stderr()).not.toMatch(/\n\s+at /)
          }),
        { concurrency: 2, discard: true },
      )
    }),
  )

  it.scoped("says at start when the admin API is off, and then has none (404 NN1002)", () =>
    Effect.gen(function* () {
      const pg = yield* PgClient.PgClient
      const databaseUrl = pg.config.url
      if (databaseUrl === undefined) return yield* Effect.dieMessage("the test database has no URL")
      const port = yield* freePort
      const api = yield* apiProcess({
        PORT: String(port),
        HOST: "127.0.0.1",
        DATABASE_URL: Redacted.value(databaseUrl),
      })
      yield* waitForOutput(
        api,
        `listening on http://127.0.0.1:${port}; admin API off (ADMIN_TOKEN unset)`,
        30,
      )
      const answer = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/admin/api/partners`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        }).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as { errors: Array<{ code: string }> },
        })),
      )
      expect(answer.status).toBe(404)
      expect(answer.body.errors[0]?.code).toBe("NN1002")
    }),
  )

  it.scoped(
    "serves HTTPS, logs JSON lines without secrets, and on SIGTERM finishes in-flight requests and exits 0",
    () =>
      Effect.gen(function* () {
        const pg = yield* PgClient.PgClient
        const databaseUrl = pg.config.url
        if (databaseUrl === undefined) return yield* Effect.dieMessage("the test database has no URL")
        const tls = yield* selfSignedCertificate
        const port = yield* freePort
        const api = yield* apiProcess({
          PORT: String(port),
          HOST: "127.0.0.1",
          DATABASE_URL: Redacted.value(databaseUrl),
          ADMIN_TOKEN,
          TLS_CERT_FILE: tls.cert,
          TLS_KEY_FILE: tls.key,
          LOG_LEVEL: "info",
        })
        yield* waitForOutput(api, `listening on https://127.0.0.1:${port}`, 30)
        expect(api.stdout()).toContain(`listening on https://127.0.0.1:${port}; admin API on /admin/api`)

        const ready = yield* httpsCall(port, tls.ca, "GET", "/health/ready").pipe(Effect.orDie)
        expect(ready.status).toBe(200)
        expect(ready.body).toEqual({ status: "ok", database: "ok" })
        // The certificate is what makes it trusted: without its CA the request is refused.
        const untrusted = yield* Effect.flip(httpsCall(port, undefined, "GET", "/health/live"))
        expect((untrusted as NodeJS.ErrnoException).code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/)

        const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
        const partner = yield* httpsCall(port, tls.ca, "POST", "/admin/api/partners", {
          json: { name: "Ops" },
          headers: { ...admin, "x-request-id": "ops-trace-1" },
        }).pipe(Effect.orDie)
        expect(partner.status).toBe(201)
        const credential = yield* httpsCall(
          port,
          tls.ca,
          "POST",
          `/admin/api/partners/${partner.body.id}/clients`,
          {
            json: {},
            headers: admin,
          },
        ).pipe(Effect.orDie)
        const secret = credential.body.client_secret as string
        const issued = yield* httpsCall(port, tls.ca, "POST", "/api/oauth/token", {
          json: { client_id: credential.body.client_id, client_secret: secret },
        }).pipe(Effect.orDie)
        const token = issued.body.access_token as string
        const users = yield* httpsCall(port, tls.ca, "GET", "/api/users", {
          headers: { authorization: `Bearer ${token}` },
        }).pipe(Effect.orDie)
        expect(users.status).toBe(200)

        // A request in flight when SIGTERM comes: its headers are in, its body is not.
        const late = slowRequest(port, tls.ca, "/admin/api/partners", admin, JSON.stringify({ name: "Late" }))
        yield* Effect.promise(() => late.continued)
        const signalledAt = Date.now()
        api.child.kill("SIGTERM")
        yield* eventually(refusesConnections(port), (refused) => refused, 10)
        late.finish()
        const answered = yield* Effect.promise(() => late.response)
        expect(answered.status).toBe(201)
        expect(JSON.parse(answered.text)).toMatchObject({ name: "Late" })
        const code = yield* Effect.promise(() => api.exit).pipe(
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("no exit within 10 s") }),
          Effect.orDie,
        )
        expect(code).toBe(0)
        expect(Date.now() - signalledAt).toBeLessThan(10_000)

        // Every line is JSON; each request has its access line with the request id; no secret anywhere.
        const lines = jsonLines(api.stdout())
        const access = lines.filter((line) => line.message === "request")
        expect(
          access.find((line) => line.annotations.request_id === "ops-trace-1")?.annotations,
        ).toMatchObject({
          service: "api",
          method: "POST",
          path: "/admin/api/partners",
          route: "/admin/api/partners",
          status: 201,
        })
        expect(access.find((line) => line.annotations.route === "/api/users")?.annotations).toMatchObject({
          method: "GET",
          status: 200,
          duration_ms: expect.any(Number),
          request_id: expect.any(String),
        })
        expect(access.filter((line) => line.annotations.route === "/admin/api/partners")).toHaveLength(2)
        const messages = lines.map((line) => line.message)
        expect(messages).toContain("stopping: accepting nothing new, finishing in-flight work")
        expect(messages).toContain("stopped")
        for (const output of [api.stdout(), api.stderr()]) {
          for (const secretValue of [ADMIN_TOKEN, secret, token]) expect(output).not.toContain(secretValue)
        }
      }),
  )
})

// ---------------------------------------------------------------------------------------------------------
// The database out of reach, and /metrics

/** A TCP proxy to the database that a test can cut (connections dropped, new ones refused) and restore. */
class DatabaseLink extends Context.Tag("test/DatabaseLink")<
  DatabaseLink,
  {
    readonly cut: Effect.Effect<void>
    readonly refuseWith: (sqlstate: string, message: string) => Effect.Effect<void>
    readonly restore: Effect.Effect<void>
  }
>() {}

// The API's own pool goes through the proxy; the test database itself is made and dropped directly.
const ProxiedDatabaseLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const direct = yield* PgClient.PgClient
    if (direct.config.url === undefined) return yield* Effect.dieMessage("the test database has no URL")
    const target = new URL(Redacted.value(direct.config.url))
    const proxy = yield* tcpProxy(target.hostname, Number(target.port === "" ? "5432" : target.port))
    const through = new URL(target.href)
    through.hostname = "127.0.0.1"
    through.port = String(proxy.port)
    return Layer.merge(
      databaseAt(Redacted.make(through.href), { poolSize: 4 }),
      Layer.succeed(DatabaseLink, {
        cut: Effect.promise(() => proxy.cut()),
        refuseWith: (sqlstate, message) => Effect.sync(() => proxy.refuseWith(sqlstate, message)),
        restore: Effect.asVoid(Effect.promise(() => proxy.restore())),
      }),
    )
  }),
).pipe(Layer.provide(testDatabase()))

// The whole API in process over a database it reaches through the proxy, with the given settings.
const outageServer = (overrides: Parameters<typeof testSettings>[0] = {}) =>
  HttpAppLive.pipe(
    Layer.provideMerge(apiServerLayer(apiHttpServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(WriteSideLive),
    Layer.provide(testSettings(overrides)),
    Layer.provideMerge(ProxiedDatabaseLive),
  )

layer(outageServer(), { timeout: "120 seconds", excludeTestServices: true })(
  "Operations in process",
  (it) => {
    it.effect("serves the OpenAPI document the tests hold every answer to, and its reference at /docs", () =>
      Effect.gen(function* () {
        const document = yield* call("GET", "/openapi.json")
        expect(document.status).toBe(200)
        expect(document.body).toEqual(JSON.parse(JSON.stringify(publishedDocument)))
        expect(document.body.components.headers.ApiVersion.schema.const).toBe(
          document.headers.get("api-version"),
        )
        // The reference's first request, its client gone while the page loads: the load is the server's,
        // not that request's, and the next request gets the page.
        const first = yield* heldRequest(yield* baseUrl, "GET /docs HTTP/1.1\r\nHost: localhost\r\n\r\n", 0)
        yield* eventually(metricNow("http_requests_in_flight"), (inFlight) => inFlight >= 2, 10)
        first.close()
        const docs = yield* call("GET", "/docs")
        expect(docs.status).toBe(200)
        expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
        // The reference embeds the same document (with the response headers only our transform adds).
        expect(docs.text).toContain('"#/components/headers/RequestId"')
        // Nothing from outside: the script inline, no default fonts from Scalar's servers.
        expect(docs.text).toContain('"withDefaultFonts":false')
        expect(docs.text).not.toMatch(/<script[^>]*\ssrc=/)
      }).pipe(Effect.scoped),
    )

    it.effect("counts requests by route template and status in /metrics, with latency and in-flight", () =>
      Effect.gen(function* () {
        // Counted from here: the registry is the process's, which other test files in this worker share.
        const before = (yield* call("GET", "/metrics")).text
        const { token } = yield* newPartner()
        // Three of one route and status: each counted under the same labels (the metrics of a label set are
        // made once and found again).
        for (let n = 0; n < 3; n++) expect((yield* call("GET", "/api/users", { token })).status).toBe(200)
        expect(
          (yield* call("GET", "/api/users/01900000-0000-7000-8000-000000000000", { token })).status,
        ).toBe(404)
        expect((yield* call("GET", "/no/such/route")).status).toBe(404)
        // Refused before routing (media type): still counted under the route it was sent to.
        expect(
          (yield* call("POST", "/api/users", {
            token,
            body: "x=1",
            headers: { "content-type": "text/plain" },
          })).status,
        ).toBe(415)
        const metrics = yield* call("GET", "/metrics")
        expect(metrics.status).toBe(200)
        expect(metrics.headers.get("content-type")).toContain("text/plain")
        const text = metrics.text
        const grew = (sample: string) => metricValue(text, sample) - metricValue(before, sample)
        expect(grew('http_requests_total{method="GET",route="/api/users",status="200"}')).toBe(3)
        expect(grew('http_requests_total{method="GET",route="/api/users/:user_id",status="404"}')).toBe(1)
        expect(grew('http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1)
        expect(grew('http_requests_total{method="POST",route="/api/users",status="415"}')).toBe(1)
        expect(grew('http_requests_total{method="POST",route="/admin/api/partners",status="201"}')).toBe(1)
        expect(
          grew(
            'http_request_duration_seconds_bucket{method="GET",route="/api/users",status="200",le="+Inf"}',
          ),
        ).toBe(3)
        expect(
          grew('http_request_duration_seconds_count{method="GET",route="/api/users",status="200"}'),
        ).toBe(3)
        // One sample line per label set, not one per request.
        expect(
          text
            .split("\n")
            .filter((line) =>
              line.startsWith('http_requests_total{method="GET",route="/api/users",status="200"} '),
            ),
        ).toHaveLength(1)
        expect(text).toContain("# TYPE http_request_duration_seconds histogram")
        // Exported before anything replayed or was throttled (at 0 then), not from the first one on.
        expect(text).toMatch(/^idempotency_replays_total \d+$/m)
        expect(text).toMatch(/^rate_limit_rejections_total \d+$/m)
        // This very request is in flight, and none of this test's earlier ones still is (requests of other
        // files in this process, on connections their tests hold open, may be counted at both reads).
        const inFlight = metricValue(text, "http_requests_in_flight")
        expect(inFlight).toBeGreaterThanOrEqual(1)
        expect(inFlight).toBeLessThanOrEqual(metricValue(before, "http_requests_in_flight"))
        // Labels hold templates, never concrete ids.
        expect(text).not.toMatch(/route="[^"]*[0-9a-f]{8}-[0-9a-f]{4}-/)
      }),
    )

    it.effect("exports the process's CPU time, memory and event loop busy and idle time in /metrics", () =>
      Effect.gen(function* () {
        const first = (yield* call("GET", "/metrics")).text
        const { token } = yield* newPartner()
        for (let n = 0; n < 5; n++) expect((yield* call("GET", "/api/users", { token })).status).toBe(200)
        const second = (yield* call("GET", "/metrics")).text
        for (const [name, type] of [
          ["process_cpu_user_seconds_total", "counter"],
          ["process_cpu_system_seconds_total", "counter"],
          ["process_resident_memory_bytes", "gauge"],
          ["nodejs_heap_used_bytes", "gauge"],
          ["nodejs_eventloop_active_seconds_total", "counter"],
          ["nodejs_eventloop_idle_seconds_total", "counter"],
        ] as const) {
          expect(second).toContain(`# TYPE ${name} ${type}\n`)
          expect(second.split("\n").filter((line) => line.startsWith(`${name} `))).toHaveLength(1)
        }
        // The figures are this process's own, read at each scrape: the requests in between cost CPU time and
        // kept the event loop busy, and the process holds its heap in resident memory.
        const grew = (name: string) => metricValue(second, name) - metricValue(first, name)
        expect(
          grew("process_cpu_user_seconds_total") + grew("process_cpu_system_seconds_total"),
        ).toBeGreaterThan(0)
        expect(grew("nodejs_eventloop_active_seconds_total")).toBeGreaterThan(0)
        expect(grew("nodejs_eventloop_idle_seconds_total")).toBeGreaterThanOrEqual(0)
        const rss = metricValue(second, "process_resident_memory_bytes")
        expect(metricValue(second, "nodejs_heap_used_bytes")).toBeGreaterThan(1_000_000)
        expect(rss).toBeGreaterThan(metricValue(second, "nodejs_heap_used_bytes"))
        expect(rss).toBeLessThan(8 * 1024 ** 3)
      }),
    )

    it.effect("exports the database pool's connections in use and idle, its size and waiting checkouts", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const pool = (text: string) => ({
          inUse: metricValue(text, 'db_pool_connections{state="in_use"}'),
          idle: metricValue(text, 'db_pool_connections{state="idle"}'),
          max: metricValue(text, "db_pool_max_connections"),
          waiting: metricValue(text, "db_pool_waiting_requests"),
        })
        const first = (yield* call("GET", "/metrics")).text
        for (const name of ["db_pool_connections", "db_pool_max_connections", "db_pool_waiting_requests"]) {
          expect(first).toContain(`# TYPE ${name} gauge\n`)
        }
        // This server's pool (poolSize 4), read from the pool itself: nothing waits while nothing holds it.
        expect(pool(first).max).toBe(4)
        expect(pool(first).waiting).toBe(0)
        expect(pool(first).inUse + pool(first).idle).toBeLessThanOrEqual(4)
        // Every connection held by a transaction that waits, and one more checkout waiting behind them (the
        // scrape itself takes no connection).
        const release = yield* Deferred.make<void>()
        const holders = yield* Effect.fork(
          Effect.all(
            Array.from({ length: 5 }, () => sql.withTransaction(Deferred.await(release))),
            { concurrency: "unbounded", discard: true },
          ),
        )
        const held = pool(
          (yield* eventually(call("GET", "/metrics"), (reply) => pool(reply.text).waiting >= 1)).text,
        )
        expect(held).toMatchObject({ inUse: 4, idle: 0, max: 4 })
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holders)
        const after = pool(
          (yield* eventually(call("GET", "/metrics"), (reply) => pool(reply.text).waiting === 0)).text,
        )
        expect(after.idle).toBeGreaterThanOrEqual(1)
        expect(after.inUse).toBeLessThan(4)
      }),
    )

    it.effect(
      "exports Effect's count of live fibers as a gauge: it goes down, which a counter never does",
      () =>
        Effect.gen(function* () {
          // Answered before the scrape, so that the request counter is exported by then.
          expect((yield* call("GET", "/health/live")).status).toBe(200)
          const text = (yield* call("GET", "/metrics")).text
          expect(text).toContain("# TYPE effect_fiber_active gauge\n")
          expect(text).toContain("# TYPE effect_fiber_started counter\n")
          expect(text).toContain("# TYPE http_requests_total counter\n")
        }),
    )

    it.effect("answers 503 SV5003 while PostgreSQL refuses connections starting up or shutting down", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const link = yield* DatabaseLink
        const user = yield* call("POST", "/api/users", {
          token,
          json: { partner_user_id: "restart-1", email: "restart@example.com" },
        })
        expect(user.status).toBe(201)
        // What a restart looks like to the API: each new connection refused with 57P03, or 57P01 / 57P02.
        for (const [sqlstate, message] of [
          ["57P03", "the database system is starting up"],
          ["57P03", "the database system is shutting down"],
          ["57P01", "terminating connection due to administrator command"],
        ] as const) {
          yield* link.refuseWith(sqlstate, message)
          const add = yield* call("POST", "/api/points/add", {
            token,
            headers: { "idempotency-key": `restart-${sqlstate}-${message.length}` },
            json: { transaction: { user_id: user.body.id, amount: 5, reference_id: `restart-${message}` } },
          })
          // A 500 told the client of a critical write to hold it as pending; nothing ran, a retry is safe.
          expect([add.status, add.body.errors[0].code, add.headers.get("retry-after")]).toEqual([
            503,
            "SV5003",
            "2",
          ])
          const read = yield* call("GET", `/api/users/${user.body.id}`, { token })
          expect([read.status, read.body.errors[0].code]).toEqual([503, "SV5003"])
          yield* link.restore
        }
        yield* eventually(
          call("GET", `/api/users/${user.body.id}`, { token }),
          (reply) => reply.status === 200,
        )
      }),
    )

    it.effect("answers 503 SV5003 with Retry-After while the database is out of reach, and recovers", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const link = yield* DatabaseLink
        yield* link.cut
        const ready = yield* call("GET", "/health/ready")
        expect(ready.status).toBe(503)
        expect(ready.body.errors[0].code).toBe("SV5003")
        expect(ready.headers.get("retry-after")).toBe("2")
        const users = yield* call("GET", "/api/users", { token })
        expect(users.status).toBe(503)
        expect(users.body.errors[0].code).toBe("SV5003")
        expect(users.headers.get("retry-after")).toBe("2")
        expect(users.text).not.toMatch(/ECONNREFUSED|SqlError|127\.0\.0\.1/)
        const metrics = yield* call("GET", "/metrics")
        expect(
          metricValue(metrics.text, 'http_requests_total{method="GET",route="/api/users",status="503"}'),
        ).toBeGreaterThanOrEqual(1)

        yield* link.restore
        yield* eventually(call("GET", "/health/ready"), (reply) => reply.status === 200)
        expect((yield* call("GET", "/api/users", { token })).status).toBe(200)
      }),
    )
  },
)

// One failed authentication a second per network: ten per 10-second window.
layer(outageServer({ authFailureLimitPerAddress: 1 }), { timeout: "120 seconds", excludeTestServices: true })(
  "Failed authentications while the database is out of reach",
  (it) => {
    it.effect("a token the database could not look up counts for nothing against its network", () =>
      Effect.gen(function* () {
        const link = yield* DatabaseLink
        const allowance = FAILED_AUTHENTICATIONS_WINDOW_SECONDS
        const madeUp = (n: number) => `pos_at_${String(n).padStart(43, "Q")}`
        yield* link.cut
        // Three windows' worth of made-up tokens: none could be looked up (503), so none is held against the
        // network, and none is refused for its failures.
        for (let n = 0; n < 3 * allowance; n++) {
          const reply = yield* call("GET", "/api/users", { token: madeUp(n) })
          expect(reply.status, reply.text).toBe(503)
          expect(reply.body.errors[0].code).toBe("SV5003")
        }
        yield* link.restore
        // Back: the network has its whole allowance of failures (a lookup the reconnecting pool still could
        // not run counts for nothing either), and then none.
        let refused = 0
        for (let n = 0; refused < allowance; n++) {
          expect(n, "answers before the allowance was spent").toBeLessThan(10 * allowance)
          const reply = yield* call("GET", "/api/users", { token: madeUp(1_000 + n) })
          expect([401, 503], reply.text).toContain(reply.status)
          if (reply.status === 401) refused++
        }
        const past = yield* call("GET", "/api/users", { token: madeUp(9_999) })
        expect(past.status, past.text).toBe(429)
        expect(past.body.errors[0].code).toBe("GH1009")
      }),
    )
  },
)

import { request as httpRequest, type OutgoingHttpHeaders } from "node:http"
import { connect } from "node:net"
import * as HttpServer from "@effect/platform/HttpServer"
import { UserActivationLive, WriteSideLive } from "@points/infrastructure"
import { eventually, testDatabase } from "@points/infrastructure/testing"
import { Effect, Layer, Option, Redacted } from "effect"
import { type ApiSettings, Settings } from "../src/config.js"
import { apiHttpServer, apiServerLayer } from "../src/http/node-server.js"
import { HttpAppLive } from "../src/server.js"
import { contractProblems } from "./contract-conformance.js"

/** The admin token of every test server. */
export const ADMIN_TOKEN = "test-admin-token-0123456789"

/** The token endpoints' limit per source address of every test server unless a test sets its own. */
export const TEST_ADDRESS_RATE_LIMIT = 10_000

/** The failed authentications a second per source address of every test server unless a test sets its own. */
export const TEST_AUTH_FAILURE_LIMIT = 10_000

/**
 * The settings of a test server: the environment's, the admin API on, and the given overrides. Every test
 * comes from 127.0.0.1, so the token endpoints' address limit runs and is reported but refuses only where a
 * test sets it lower (oauth-endpoints); so does the limit of failed authentications (failed-authentications).
 */
export const testSettings = (overrides: Partial<ApiSettings> = {}) =>
  Settings.withOverrides({
    adminToken: Option.some(Redacted.make(ADMIN_TOKEN)),
    tokenRateLimitPerAddress: TEST_ADDRESS_RATE_LIMIT,
    authFailureLimitPerAddress: TEST_AUTH_FAILURE_LIMIT,
    ...overrides,
  })

/** The whole API on a real socket (127.0.0.1, a free port) over a fresh database, with user activation. */
export const testServer = (overrides: Partial<ApiSettings> = {}) => testServerOn("127.0.0.1", overrides)

/** The whole API as testServer has it, listening on `host` (::1: its clients come from IPv6). */
export const testServerOn = (host: string, overrides: Partial<ApiSettings> = {}) =>
  Layer.mergeAll(HttpAppLive, UserActivationLive).pipe(
    Layer.provideMerge(apiServerLayer(apiHttpServer, { port: 0, host })),
    Layer.provide(WriteSideLive),
    Layer.provide(testSettings(overrides)),
    Layer.provideMerge(testDatabase()),
  )

/** A response as tests look at it. */
export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON.
  readonly body: any
}

/** The base URL of the running test server. */
export const baseUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address as HttpServer.TcpAddress
  const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname
  return `http://${host}:${address.port}`
})

/** Sends a request to the test server; `json` sets a JSON body, `body` a raw one. */
export const call = (
  method: string,
  path: string,
  options: {
    readonly token?: string
    readonly json?: unknown
    readonly body?: string
    readonly headers?: Record<string, string>
  } = {},
) => Effect.flatMap(baseUrl, (base) => callAt(base, method, path, options))

/** A partner with one credential and a bearer token, made through the admin and OAuth endpoints of `base`. */
export const newPartnerAt = (base: string, name = "Acme") =>
  Effect.gen(function* () {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
    const partner = yield* callAt(base, "POST", "/admin/api/partners", { json: { name }, headers: admin })
    const credential = yield* callAt(base, "POST", `/admin/api/partners/${partner.body.id}/clients`, {
      json: { name: "server" },
      headers: admin,
    })
    const token = yield* callAt(base, "POST", "/api/oauth/token", {
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: credential.body.client_id,
        client_secret: credential.body.client_secret,
      }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    })
    return {
      partnerId: partner.body.id as string,
      clientId: credential.body.client_id as string,
      clientSecret: credential.body.client_secret as string,
      token: token.body.access_token as string,
    }
  })

/** A partner with one credential and a bearer token, on the test server (see newPartnerAt). */
export const newPartner = (name = "Acme") => Effect.flatMap(baseUrl, (base) => newPartnerAt(base, name))

/**
 * A request sent with node:http exactly as given, for what fetch cannot send: a header field repeated (an
 * array), a body as byte chunks (with its Content-Length) or, with `chunked`, in pieces without a length. A
 * connection error after the answer arrived is ignored: the server may close once it has answered.
 */
export const nodeRequest = (
  url: string,
  options: {
    readonly method: string
    readonly headers?: Readonly<Record<string, string | ReadonlyArray<string>>>
    readonly chunks?: ReadonlyArray<string | Buffer>
    readonly chunked?: boolean
    /** The client's own address: any of 127.0.0.0/8 on loopback, to come from another network. */
    readonly localAddress?: string
  },
) =>
  Effect.async<Reply, Error>((resume) => {
    const chunks = options.chunks ?? []
    const length = chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk), 0)
    const headers = {
      ...options.headers,
      ...(options.chunked === true || chunks.length === 0 ? {} : { "content-length": String(length) }),
    }
    let answered = false
    const request = httpRequest(url, {
      method: options.method,
      headers: headers as OutgoingHttpHeaders,
      ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
    })
    request.on("error", (error) => (answered ? undefined : resume(Effect.fail(error))))
    request.on("response", (response) => {
      answered = true
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        text += chunk
      })
      response.on("end", () => {
        const replyHeaders = new Headers()
        for (const [name, value] of Object.entries(response.headers)) {
          if (typeof value === "string") replyHeaders.set(name, value)
        }
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          body = undefined
        }
        const problems = contractProblems({
          method: options.method,
          path: new URL(url).pathname,
          status: response.statusCode ?? 0,
          headers: replyHeaders,
          text,
        })
        if (problems.length > 0) return resume(Effect.die(notAsPublished(problems)))
        resume(Effect.succeed({ status: response.statusCode ?? 0, headers: replyHeaders, text, body }))
      })
    })
    for (const chunk of chunks) request.write(chunk)
    request.end()
  })

/** Splits a text into pieces of 64 KiB, to send it chunked. */
export const piecesOf = (text: string) =>
  Array.from({ length: Math.ceil(text.length / 65_536) }, (_, n) => text.slice(n * 65_536, (n + 1) * 65_536))

export { eventually }

/** A registered user of the partner at `base`, once a consumer has activated it (waiting up to `seconds`). */
export const activeUserAt = (
  base: string,
  token: string,
  partnerUserId = `p-${Math.random().toString(36).slice(2)}`,
  seconds?: number,
) =>
  Effect.gen(function* () {
    const created = yield* callAt(base, "POST", "/api/users", {
      token,
      json: { partner_user_id: partnerUserId, email: "ada@example.com", name: "Ada" },
    })
    // Every 50 ms, not 20: each poll takes a cell of the partner's rate limit, and tests with a small burst
    // must not find it drained by a slow activation.
    yield* eventually(
      callAt(base, "GET", `/api/users/${created.body.id}`, { token }),
      (reply) => reply.body?.status === "active",
      seconds,
      "50 millis",
    )
    return created.body.id as string
  })

/** A registered user of the partner on the test server, already activated by the consumer. */
export const activeUser = (token: string, partnerUserId?: string) =>
  Effect.flatMap(baseUrl, (base) => activeUserAt(base, token, partnerUserId))

// Every answer a test receives is held to the published document: a status it does not list, or a body its
// schema refuses, fails the test that received it.
const notAsPublished = (problems: ReadonlyArray<string>) =>
  new Error(`not as published in /openapi.json:\n${problems.join("\n")}`)

/** Sends a request to the server at `base` (another process, a second server), as `call` does. */
export const callAt = (
  base: string,
  method: string,
  path: string,
  options: {
    readonly token?: string
    readonly json?: unknown
    readonly body?: string
    readonly headers?: Record<string, string>
  } = {},
) =>
  Effect.promise(async (): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
    let body: string | undefined = options.body
    if (options.json !== undefined) {
      body = JSON.stringify(options.json)
      headers["content-type"] ??= "application/json"
    }
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    })
    const text = await response.text()
    let parsed: unknown = null
    try {
      parsed = text === "" ? null : JSON.parse(text)
    } catch {
      parsed = null
    }
    const problems = contractProblems({
      method,
      path,
      status: response.status,
      headers: response.headers,
      text,
    })
    if (problems.length > 0) throw notAsPublished(problems)
    return { status: response.status, headers: response.headers, text, body: parsed }
  })

/**
 * Like `testServer`, but no consumer activates users until a test runs `withActivation`: a user stays
 * `processing` for as long as a test needs it to. The write side is in the tests' context.
 */
export const testServerWithoutActivation = (overrides: Partial<ApiSettings> = {}) =>
  HttpAppLive.pipe(
    Layer.provideMerge(
      apiServerLayer(apiHttpServer, {
        port: 0,
        host: "127.0.0.1",
      }),
    ),
    Layer.provideMerge(WriteSideLive),
    Layer.provide(testSettings(overrides)),
    Layer.provideMerge(testDatabase()),
  )

/** Runs `effect` while the user activation consumer runs (on a `testServerWithoutActivation`). */
export const withActivation = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.zipRight(Layer.build(UserActivationLive), effect))

/** The value of one sample of `/metrics` (0 when absent), e.g. `metricValue(text, 'x_total{route="/a"}')`. */
export const metricValue = (text: string, sample: string): number => {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${sample} `))
  return line === undefined ? 0 : Number(line.slice(sample.length + 1))
}

/** A sample's value in the test server's /metrics now (see metricValue). */
export const metricNow = (sample: string) =>
  Effect.map(call("GET", "/metrics"), (reply) => metricValue(reply.text, sample))

/**
 * A connection that sends `head` and part of its body and keeps the rest back: the first answer it gets (or ""
 * if none came before the connection closed), and a way to close it.
 */
export const heldRequest = (url: string, head: string, bodyBytes: number, from = "127.0.0.1") =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const { hostname, port } = new URL(url)
      let received = ""
      let settle: (answer: string) => void = () => {}
      const answer = new Promise<string>((resolve) => {
        settle = resolve
      })
      // `from`: the client's own address, any of 127.0.0.0/8 on loopback, to be told apart as a network.
      const socket = connect({ port: Number(port), host: hostname, localAddress: from }, () => {
        socket.write(head)
        socket.write(Buffer.alloc(bodyBytes, "a"))
      })
      socket.setEncoding("latin1")
      socket.on("data", (chunk: string) => {
        received += chunk
        const [top = "", body = ""] = received.split("\r\n\r\n")
        const length = Number(/content-length: (\d+)/i.exec(top)?.[1] ?? Number.NaN)
        if (Buffer.byteLength(body, "latin1") >= length) settle(received)
      })
      socket.on("error", () => settle(received))
      socket.on("close", () => settle(received))
      return { answer, close: () => socket.destroy() }
    }),
    (held) => Effect.sync(held.close),
  )

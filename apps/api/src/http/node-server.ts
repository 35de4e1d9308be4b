import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http"
import { createServer as createHttpsServer, type ServerOptions } from "node:https"
import { Server as NetServer } from "node:net"
import type { Duplex } from "node:stream"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type { ErrorEntry } from "@points/http-api"
import { uuidV7 } from "@points/infrastructure"
import { Context, Effect, Layer } from "effect"
import { entryOf, oauthFieldsOf } from "./api-error-of.js"
import { CappedRequest } from "./capped-request.js"
import { pathOf } from "./request-context.js"
import { commonHeaders } from "./server-middleware.js"
import { answerBegun, bodyArriving, drainingServers, SettledResponse } from "./settled-response.js"

// A request target in absolute form (`http://host/api/users?x`), which a server must accept (RFC 9112 3.2.2),
// as its path and query; any other target as it is.
const originFormOf = (target: string) => {
  if (!/^https?:\/\//i.test(target) || !URL.canParse(target)) return target
  const { pathname, search } = new URL(target)
  return `${pathname}${search}`
}

// The path of a refused request, when the bytes Node refused begin with its request line ("" otherwise: a
// header too large may have come in a later packet than its request line, or the line itself is malformed).
const refusedPathOf = (rawPacket: unknown) => {
  if (!Buffer.isBuffer(rawPacket)) return ""
  const line = /^[A-Z]+ (\S+) HTTP\/\d\.\d\r?\n/.exec(rawPacket.subarray(0, 8_192).toString("latin1"))
  return line?.[1] === undefined ? "" : pathOf({ url: originFormOf(line[1]) })
}

// Node answers a request it cannot parse (a malformed request line or header, a duplicate Content-Length,
// headers over its limit) itself, before any middleware runs: a bare status, no body, none of the headers
// every response carries. This answer is the published one, with the OAuth endpoints' fields and headers
// when the request line names one of them.
const answerUnparsable = (
  error: Error & { readonly code?: string; readonly rawPacket?: unknown },
  socket: Duplex,
) => {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy()
    return
  }
  // A body that broke after its request was answered (a 415 or 401 sent before the body, which Node was
  // still reading to drop it): that request has its answer, and a second one would be taken for the answer to
  // the client's next request. The connection closes instead. (A request whose body arrived in full is
  // done: an error then is in the next request's head, which is answered.)
  if (answerBegun(socket) && bodyArriving(socket)) {
    socket.destroy()
    return
  }
  // A request that did not arrive in full in time (a client sending slowly holds a connection meanwhile):
  // answered, unless it already was (a 401 sent before its body, which Node was still dropping).
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    if (answerBegun(socket)) return socket.destroy()
    return answerRaw(socket, {
      status: 408,
      reason: "Request Timeout",
      path: refusedPathOf(error.rawPacket),
      code: "GH1006",
      message: "invalid params: the request did not arrive in full in time",
    })
  }
  const tooLarge = error.code === "HPE_HEADER_OVERFLOW"
  answerRaw(socket, {
    status: tooLarge ? 431 : 400,
    reason: tooLarge ? "Request Header Fields Too Large" : "Bad Request",
    path: refusedPathOf(error.rawPacket),
    code: "GH1006",
    message: tooLarge ? "invalid params: the request's headers are too large" : "malformed HTTP request",
  })
}

// An answer in the published format written straight to a socket the platform never saw, which then closes.
const answerRaw = (
  socket: Duplex,
  answer: {
    readonly status: number
    readonly reason: string
    readonly path: string
    readonly code: ErrorEntry["code"]
    readonly message: string
  },
) => {
  const { status, reason, path } = answer
  const entry = entryOf(answer.code, answer.message)
  const body = JSON.stringify({ errors: [entry], ...oauthFieldsOf(path, status, entry) })
  const headers = {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(body)),
    ...commonHeaders(path, uuidV7()),
    Connection: "close",
  }
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`)
  socket.end(`HTTP/1.1 ${status} ${reason}\r\n${head.join("")}\r\n${body}`)
}

// Node hands a CONNECT request to "connect" listeners only, and without one closes the connection unanswered.
// The API tunnels nothing: no route, as for any other method it does not serve.
const answerConnect = (request: IncomingMessage, socket: Duplex) =>
  answerRaw(socket, {
    status: 404,
    reason: "Not Found",
    path: pathOf({ url: originFormOf(request.url ?? "") }),
    code: "NN1002",
    message: "route not found",
  })

// A request in absolute form is routed by its path and query: the router matches the target as sent, and
// found no route for it.
const toOriginForm = (request: IncomingMessage) => {
  if (request.url !== undefined) request.url = originFormOf(request.url)
}

// Node ends a connection whose client half-closed it (sent its request, then shut its side down, as `nc -N`
// and some HTTP/1.0 clients do) at once, so the request in flight is taken for abandoned and never answered.
// `httpAllowHalfOpen` (a property of Node's HTTP server since 0.x, not in its typings) answers it instead,
// then ends the connection. A body cut short by the half-close is still refused as unparsable. Set on the
// HTTPS server too, where it changes nothing: its TLS connections are not half-open, and made so, one whose
// client gives up its handshake never closes.
const answeringHalfClosed = <S extends Server>(server: S): S =>
  Object.assign(server, { httpAllowHalfOpen: true })

// Before the platform's own listener, which routes the request.
const withPublishedErrors = <S extends Server>(server: S): S =>
  answeringHalfClosed(server)
    .on("clientError", answerUnparsable)
    .on("connect", answerConnect)
    .prependListener("request", toOriginForm)

/** How long a request may take to arrive in full, head and body (Node's default is 5 minutes). */
export const REQUEST_TIMEOUT_MILLISECONDS = 60_000

// What both servers share. Node checks the time limits of its connections every connectionsCheckingInterval
// (30 s by default): every second, a request over its limit is answered within a second of it.
const serverOptions = (requestTimeout: number) => ({
  IncomingMessage: CappedRequest,
  ServerResponse: SettledResponse,
  requireHostHeader: false,
  requestTimeout,
  headersTimeout: Math.min(requestTimeout, 60_000),
  connectionsCheckingInterval: 1_000,
})

/**
 * The API's HTTP server: bodies capped while read (CappedRequest), unparsable requests answered as published,
 * a missing Host header refused by the server middleware (Node's own check answers with a bare 400), a
 * request that has not arrived in full within `requestTimeout` answered 408 and its connection closed.
 */
export const apiHttpServer = (requestTimeout = REQUEST_TIMEOUT_MILLISECONDS) =>
  withPublishedErrors(createHttpServer(serverOptions(requestTimeout)))

/** The API's HTTPS server, as apiHttpServer with the given certificate and key. */
export const apiHttpsServer = (options: Pick<ServerOptions, "cert" | "key">) =>
  withPublishedErrors(createHttpsServer({ ...options, ...serverOptions(REQUEST_TIMEOUT_MILLISECONDS) }))

/**
 * How long in-flight requests get to finish once the server stops accepting (SIGTERM must end within 10 s):
 * the consumers, the pool and an embedded server then stop before STOP_DEADLINE_MILLIS (9 s).
 */
const DRAIN_MILLISECONDS = 7_000

/** How long a kept-alive connection must have been idle for a drain to close it (see drainServer). */
const IDLE_SWEEP_MILLISECONDS = 1_000

/**
 * Stops accepting connections and waits until every open one has closed. Each answer from now on says
 * `Connection: close` and closes its connection once sent: a client that keeps its connection busy would
 * otherwise never let it go idle, and have a request cut at the deadline after its write committed. Idle
 * kept-alive connections are closed every second rather than at once: a busy client's connection is idle for
 * an instant between an answer and its next request, which would be cut unread (a reset); by the first sweep
 * it has had its `Connection: close` answer. Those still open after DRAIN_MILLISECONDS are closed by force.
 */
export const drainServer = (server: Server) =>
  Effect.async<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    drainingServers.add(server)
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MILLISECONDS)
    const deadline = setTimeout(() => server.closeAllConnections(), DRAIN_MILLISECONDS)
    // Node's http close would also close the idle connections at once: the listening socket alone closes.
    NetServer.prototype.close.call(server, () => {
      clearInterval(sweep)
      clearTimeout(deadline)
      resume(Effect.void)
    })
  })

/** The API's Node server itself: for the graceful stop that drains it and the direct write path in front of it. */
export class ApiNodeServer extends Context.Tag("@points/api/ApiNodeServer")<ApiNodeServer, Server>() {}

/**
 * The platform's HTTP server over a Node server made by `make` (apiHttpServer, say), listening as `listen`
 * says, and that Node server itself (ApiNodeServer).
 */
export const apiServerLayer = (
  make: () => Server,
  listen: { readonly port: number; readonly host: string },
) =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      const server = make()
      return Layer.merge(
        NodeHttpServer.layer(() => server, listen),
        Layer.succeed(ApiNodeServer, server),
      )
    }),
  )

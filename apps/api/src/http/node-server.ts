import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http"
import { createServer as createHttpsServer, type ServerOptions } from "node:https"
import type { Duplex } from "node:stream"
import { API_VERSION } from "@points/http-api"
import { uuidV7 } from "@points/infrastructure"
import { Effect } from "effect"
import { entryOf } from "./api-error-of.js"
import { CappedRequest } from "./capped-request.js"
import { SettledResponse } from "./settled-response.js"

// Node answers a request it cannot parse (a malformed request line or header, a duplicate Content-Length,
// headers over its limit) itself, before any middleware runs: a bare status, no body, none of the headers
// every response carries. This answer is the published one.
const answerUnparsable = (error: Error & { readonly code?: string }, socket: Duplex) => {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy()
    return
  }
  const tooLarge = error.code === "HPE_HEADER_OVERFLOW"
  const [status, reason] = tooLarge ? [431, "Request Header Fields Too Large"] : [400, "Bad Request"]
  const body = JSON.stringify({
    errors: [
      entryOf(
        "GH1006",
        tooLarge ? "invalid params: the request's headers are too large" : "malformed HTTP request",
      ),
    ],
  })
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${uuidV7()}\r\nApi-Version: ${API_VERSION}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  )
}

// A request target in absolute form (`GET http://host/api/users`), which a server must accept (RFC 9112 3.2.2),
// is routed by its path and query: the router matches the target as sent, and found no route for it.
const toOriginForm = (request: IncomingMessage) => {
  const target = request.url ?? ""
  if (!/^https?:\/\//i.test(target) || !URL.canParse(target)) return
  const { pathname, search } = new URL(target)
  request.url = `${pathname}${search}`
}

// Before the platform's own listener, which routes the request.
const withPublishedErrors = <S extends Server>(server: S): S =>
  server.on("clientError", answerUnparsable).prependListener("request", toOriginForm)

/**
 * The API's HTTP server: bodies capped while read (CappedRequest), unparsable requests answered as published,
 * a missing Host header refused by the server middleware (Node's own check answers with a bare 400).
 */
export const apiHttpServer = () =>
  withPublishedErrors(
    createHttpServer({
      IncomingMessage: CappedRequest,
      ServerResponse: SettledResponse,
      requireHostHeader: false,
    }),
  )

/** The API's HTTPS server, as apiHttpServer with the given certificate and key. */
export const apiHttpsServer = (options: Pick<ServerOptions, "cert" | "key">) =>
  withPublishedErrors(
    createHttpsServer({
      ...options,
      IncomingMessage: CappedRequest,
      ServerResponse: SettledResponse,
      requireHostHeader: false,
    }),
  )

/** How long in-flight requests get to finish once the server stops accepting (SIGTERM must end within 10 s). */
const DRAIN_MILLISECONDS = 8_000

/**
 * Stops accepting connections and waits until every open one has closed: idle kept-alive ones at once, the
 * others once their requests are answered (Node closes them when idle from then on), those still open after
 * DRAIN_MILLISECONDS by force.
 */
export const drainServer = (server: Server) =>
  Effect.async<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    const deadline = setTimeout(() => server.closeAllConnections(), DRAIN_MILLISECONDS)
    server.close(() => {
      clearTimeout(deadline)
      resume(Effect.void)
    })
    server.closeIdleConnections()
  })

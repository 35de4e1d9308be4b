import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"

/** A request the server received. */
export interface Received {
  readonly method: string
  readonly path: string
  /** The query string, without its `?` ("" when none). */
  readonly query: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/**
 * One scripted answer: a JSON body, a body sent as given (`raw`), or `cut` (the headers and the first half of
 * the body, then the connection closes); `"drop"` closes the connection without any response and `"stall"`
 * sends the headers of a 201 and never the body.
 */
export type Reply =
  | { readonly status: number; readonly body?: unknown; readonly headers?: Record<string, string> }
  | { readonly status: number; readonly raw: string; readonly headers?: Record<string, string> }
  | { readonly status: number; readonly cut: unknown }
  | "drop"
  | "stall"

/** A local HTTP server answering from a script, recording everything it receives. */
export interface ScriptedServer {
  readonly baseUrl: string
  /** Every request, token requests included, in arrival order. */
  readonly received: Array<Received>
  /** The answers to `method path`, in turn; the last one repeats. */
  readonly script: (method: string, path: string, replies: ReadonlyArray<Reply>) => void
  /** The lifetime (seconds) of each token issued, in turn; the last one repeats. Default 3600. */
  readonly tokenLifetimes: (seconds: ReadonlyArray<number>) => void
  /** The requests to `method path`. */
  readonly requestsTo: (method: string, path: string) => ReadonlyArray<Received>
}

/** The published error body with one entry. */
export const errorBody = (code: string, message: string) => ({
  errors: [{ id: "0198d7e2-0000-7000-8000-000000000000", code, message }],
})

/** The answer of Create token for token `tok-<n>`, living `lifetime` seconds from now. */
export const tokenBody = (n: number, lifetime = 3600) => {
  const token = `tok-${n}`
  return {
    token_id: `0198d7e2-0000-7000-8000-00000000000${n % 10}`,
    token,
    access_token: token,
    token_type: "Bearer",
    expires_at: Math.floor(Date.now() / 1000) + lifetime,
    expires_in: lifetime,
  }
}

/** Starts a scripted server on 127.0.0.1 (a free port) for the scope. Token `tok-<n>` answers Create Token. */
export const scriptedServer = Effect.acquireRelease(
  Effect.async<{ readonly server: ReturnType<typeof createServer>; readonly scripted: ScriptedServer }>(
    (resume) => {
      const received: Array<Received> = []
      const scripts = new Map<string, Array<Reply>>()
      let lifetimes: ReadonlyArray<number> = [3600]
      let issued = 0
      const next = (key: string): Reply | undefined => {
        const queue = scripts.get(key)
        if (queue === undefined || queue.length === 0) return undefined
        return queue.length > 1 ? queue.shift() : queue[0]
      }
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const [path = "/", query = ""] = (request.url ?? "/").split("?")
          const method = request.method ?? "GET"
          received.push({
            method,
            path,
            query,
            headers: request.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          })
          let reply = next(`${method} ${path}`)
          if (reply === undefined && method === "POST" && path === "/api/oauth/token") {
            const lifetime = lifetimes[Math.min(issued, lifetimes.length - 1)] ?? 3600
            issued += 1
            reply = { status: 200, body: tokenBody(issued, lifetime) }
          }
          if (reply === "drop") {
            request.socket.destroy()
            return
          }
          if (reply === "stall") {
            response.writeHead(201, { "content-type": "application/json", "content-length": "1000" })
            response.flushHeaders()
            return
          }
          const answer = reply ?? { status: 404, body: errorBody("NN1002", "route not found") }
          if ("cut" in answer) {
            const text = JSON.stringify(answer.cut)
            response.writeHead(answer.status, {
              "content-type": "application/json",
              "content-length": String(Buffer.byteLength(text)),
            })
            response.write(text.slice(0, Math.floor(text.length / 2)), () => request.socket.destroy())
            return
          }
          response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers })
          if ("raw" in answer) response.end(answer.raw)
          else response.end(answer.body === undefined ? "" : JSON.stringify(answer.body))
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(
          Effect.succeed({
            server,
            scripted: {
              baseUrl: `http://127.0.0.1:${port}`,
              received,
              script: (method, path, replies) => scripts.set(`${method} ${path}`, [...replies]),
              tokenLifetimes: (seconds) => {
                lifetimes = seconds
              },
              requestsTo: (method, path) => received.filter((r) => r.method === method && r.path === path),
            },
          }),
        )
      })
    },
  ),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    }),
).pipe(Effect.map(({ scripted }) => scripted))

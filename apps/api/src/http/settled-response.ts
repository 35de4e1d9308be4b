import {
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  type Server,
  ServerResponse,
} from "node:http"

/** The servers that are draining (see drainServer): each answer they write from then on closes its connection. */
export const drainingServers = new WeakSet<Server>()

// Each connection's answer to its current request (the last one whose head Node parsed on it).
const currentAnswers = new WeakMap<object, ServerResponse>()

/** Whether the connection's current request has had its answer begun: one more answer there would be a stray. */
export const answerBegun = (connection: object) => currentAnswers.get(connection)?.headersSent === true

/** Whether the body of the connection's current request is still arriving (Node reads it even once answered). */
export const bodyArriving = (connection: object) => currentAnswers.get(connection)?.req.complete === false

/**
 * A response that always ends: its `end` callback is called once the answer is written or once the
 * connection is gone, and it closes when its connection closes, even before it ever had the connection.
 * Node calls the end callback on "finish" only, which never comes when the client went away first, and the
 * platform's server waits for that callback to end the request's fiber: every request whose client
 * disconnected before its answer left a fiber waiting for ever (memory, and a request counted in flight).
 * A pipelined request's answer waits for the answers before it, and is given the connection only then; if the
 * connection closes meanwhile (the client left, or an earlier answer said `Connection: close`), Node never
 * closes that answer: it closes here, which also tells the platform to interrupt the request's fiber.
 */
export class SettledResponse<
  Request extends IncomingMessage = IncomingMessage,
> extends ServerResponse<Request> {
  // Node also passes its options (highWaterMark, ...), which the type definitions leave out.
  constructor(request: Request, ...options: Array<unknown>) {
    super(request, ...(options as []))
    const connection = request.socket
    // A new request on the connection: its answer is the one the connection's state is read from.
    currentAnswers.set(connection, this)
    const closeUnanswered = () => {
      // Once given the connection, Node closes the answer itself when the connection closes.
      if (this.socket !== null || this.destroyed) return
      this.destroyed = true
      this.emit("close")
    }
    connection.once("close", closeUnanswered)
    // A kept-alive connection carries many requests: each one's listener goes with its answer.
    const detach = () => connection.removeListener("close", closeUnanswered)
    this.once("finish", detach)
    this.once("close", detach)
  }

  // Every answer's head goes through here (Node's implicit head too): while its server drains, it says
  // `Connection: close`, and Node closes the connection once it is sent.
  override writeHead(
    statusCode: number,
    ...rest: [
      (string | OutgoingHttpHeaders | Array<OutgoingHttpHeader>)?,
      (OutgoingHttpHeaders | Array<OutgoingHttpHeader>)?,
    ]
  ): this {
    const server = (this.req.socket as { readonly server?: Server }).server
    if (server !== undefined && drainingServers.has(server)) this.setHeader("Connection", "close")
    return super.writeHead(statusCode, ...(rest as []))
  }

  override end(...args: Array<unknown>): this {
    const last = args.at(-1)
    if (typeof last !== "function") return super.end(...(args as []))
    const callback = last as (error?: Error | null) => void
    let settled = false
    const settle = (error?: Error | null) => {
      if (settled) return
      settled = true
      callback(error)
    }
    if (this.destroyed) {
      // Nothing can be written any more; Node would drop the answer and never call back.
      process.nextTick(settle)
      return super.end(...(args.slice(0, -1) as []))
    }
    this.once("close", () => settle())
    return super.end(...(args.slice(0, -1) as []), settle)
  }
}

import { type IncomingMessage, ServerResponse } from "node:http"

/**
 * A response whose `end` callback is always called: once the answer is written, or once the connection is
 * gone. Node calls it on "finish" only, which never comes when the client went away first, and the
 * platform's server waits for that callback to end the request's fiber: every request whose client
 * disconnected before its answer left a fiber waiting for ever (memory, and a request counted in flight).
 */
export class SettledResponse<
  Request extends IncomingMessage = IncomingMessage,
> extends ServerResponse<Request> {
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

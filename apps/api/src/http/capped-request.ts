import { IncomingMessage } from "node:http"

/** The largest request body accepted (DESIGN.md section 2). */
export const MAX_BODY_BYTES = 1_048_576

/** The failure a body over MAX_BODY_BYTES reads with. */
export class BodyTooLarge extends Error {
  constructor() {
    super(`payload too large: the limit is ${MAX_BODY_BYTES} bytes`)
  }
}

/**
 * A request whose body stops at MAX_BODY_BYTES: one sent without Content-Length (chunked), which nothing can
 * refuse before reading, fails its read at the limit and the rest is read and dropped, so that the server
 * can still answer 413 GH1008 on the connection. (@effect/platform's own cap, MaxBodySize, destroys the
 * socket when a read goes over it: the client got a reset instead of an answer.)
 */
export class CappedRequest extends IncomingMessage {
  private bodyBytes = 0
  /** Whether the body went over MAX_BODY_BYTES. */
  tooLarge = false

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (this.tooLarge) return true
    if (chunk !== null && typeof chunk === "object" && "length" in chunk) {
      this.bodyBytes += Number(chunk.length)
      if (this.bodyBytes > MAX_BODY_BYTES) {
        this.tooLarge = true
        this.destroy(new BodyTooLarge())
        return true
      }
    }
    return super.push(chunk, encoding)
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // The socket stays open for the answer; what the client still sends is dropped by push.
    if (this.tooLarge) process.nextTick(callback, error)
    else super._destroy(error, callback)
  }
}

/** Whether a request's body went over MAX_BODY_BYTES while it was read. */
export const bodyWasTooLarge = (request: IncomingMessage) =>
  request instanceof CappedRequest && request.tooLarge

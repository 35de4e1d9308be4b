import { IncomingMessage } from "node:http"
import type { Socket } from "node:net"
import { TextDecoder } from "node:util"
import { type AddressSource, NETWORKS_PER_SITE, sourceOfAddress } from "@points/infrastructure"
import { isOAuthPath } from "./api-error-of.js"

/** The largest request body accepted (DESIGN.md section 2). */
export const MAX_BODY_BYTES = 1_048_576

/**
 * The largest body the OAuth endpoints accept (16 KiB): a token or revocation request needs a few hundred
 * bytes, and these bodies are read before any credential is checked (the credentials are in them), so a
 * client with none could otherwise hold 1 MiB of the body budget per connection.
 */
export const MAX_OAUTH_BODY_BYTES = 16_384

/** The largest body a request for `path` (its query string ignored) may carry. */
export const maxBodyBytesOf = (path: string): number =>
  isOAuthPath(path.split("?")[0] ?? "") ? MAX_OAUTH_BODY_BYTES : MAX_BODY_BYTES

/**
 * The most body bytes every request of the process together may hold while their bodies arrive (64 MiB: a
 * quarter of the API's heap limit). A body that would go past it is refused with 503 SV5003: however many
 * connections send bodies slowly, the memory they take stays bounded.
 */
export const MAX_BUFFERED_BODY_BYTES = 64 * 1_048_576

/**
 * The most of MAX_BUFFERED_BODY_BYTES the requests of one source network (an IPv4 address, an IPv6 /64: see
 * sourceNetworkOf) may hold together (8 MiB: eight of the largest bodies at once). Without it one client
 * sending bodies slowly, token requests needing no credentials, could take the whole budget, and every other
 * partner's POSTs would be refused 503 until it let go.
 */
export const MAX_BUFFERED_BODY_BYTES_PER_NETWORK = MAX_BUFFERED_BODY_BYTES / 8

/**
 * The most the requests of one IPv6 site (a /48: see sourceSiteOf) may hold together: NETWORKS_PER_SITE
 * networks' shares (16 MiB), so that a caller holding a /48 cannot take the whole budget through eight of its
 * 65,536 networks.
 */
export const MAX_BUFFERED_BODY_BYTES_PER_SITE = MAX_BUFFERED_BODY_BYTES_PER_NETWORK * NETWORKS_PER_SITE

let bufferedBodyBytes = 0
// What each source network's requests hold now, and each IPv6 site's; one holding nothing has no entry.
const networkBodyBytes = new Map<string, number>()
const siteBodyBytes = new Map<string, number>()

// Where a connection's requests come from, as the shares count them: its source network, and its site if
// it has one (IPv6). Worked out once for all the requests the connection carries.
const sourceOfSocket = new WeakMap<Socket, AddressSource>()

const sourceOf = (socket: Socket | null): AddressSource => {
  if (socket === null) return sourceOfAddress("unknown")
  let source = sourceOfSocket.get(socket)
  if (source === undefined) {
    source = sourceOfAddress(socket.remoteAddress ?? "unknown")
    sourceOfSocket.set(socket, source)
  }
  return source
}

// Adds `bytes` (negative: gives them back) to a share's count, dropping the entry of one that holds nothing.
const addTo = (shares: Map<string, number>, key: string | undefined, bytes: number) => {
  if (key === undefined) return
  const now = (shares.get(key) ?? 0) + bytes
  if (now > 0) shares.set(key, now)
  else shares.delete(key)
}

// IncomingMessage's own `_dump` (not in its type declarations): it resumes the body and drops what comes.
const nodeDump = (IncomingMessage.prototype as unknown as { readonly _dump: (this: IncomingMessage) => void })
  ._dump

/** The body bytes every request of the process together holds now, while their bodies arrive. */
export const bodyBytesArriving = () => bufferedBodyBytes

/** The source networks whose requests hold body bytes now: at most one entry per network sending bodies. */
export const networksWithBodiesArriving = () => networkBodyBytes.size

/**
 * Whose share of the body budget a refused body would have gone past: the process's, its network's, or its
 * IPv6 site's.
 */
export type BodyBudget = "process" | "network" | "site"

/**
 * The failure a body that would go past MAX_BUFFERED_BODY_BYTES, or its network's or site's share of it,
 * reads with.
 */
export class BodyOverBudget extends Error {
  constructor(readonly budget: BodyBudget) {
    super(`service unavailable: too many request bodies are arriving at once${bodiesFrom[budget]}`)
  }
}

/** Whose bodies a refusal for each budget names, as its message ends: none for the process's. */
export const bodiesFrom: Readonly<Record<BodyBudget, string>> = {
  process: "",
  network: " from your network",
  site: " from your IPv6 /48",
}

/** The failure a body over its limit (maxBodyBytesOf) reads with. */
export class BodyTooLarge extends Error {
  constructor(readonly limitBytes: number) {
    super(`payload too large: the limit is ${limitBytes} bytes`)
  }
}

/** The failure a body that is not UTF-8 reads with (RFC 8259 8.1: JSON is UTF-8). */
export class BodyNotUtf8 extends Error {
  constructor() {
    super("the body is not valid UTF-8")
  }
}

/**
 * A request whose body stops at its limit (maxBodyBytesOf: MAX_BODY_BYTES, or MAX_OAUTH_BODY_BYTES on the OAuth
 * endpoints): one sent without Content-Length (chunked), which nothing can
 * refuse before reading, fails its read at the limit and the rest is read and dropped, so that the server
 * can still answer 413 GH1008 on the connection. (@effect/platform's own cap, MaxBodySize, destroys the
 * socket when a read goes over it: the client got a reset instead of an answer.) A body that is not UTF-8
 * fails its read once it has all arrived, where Node's decoding would have read its bad bytes as U+FFFD and
 * the request would have gone on with text the client never sent. The server middleware reads every body a
 * routed request carries before its route runs (ignoring a failure there: a route that takes no body never
 * sees it); a body refused before routing (413, 415) is never read, and just ends.
 */
export class CappedRequest extends IncomingMessage {
  private bodyBytes = 0
  // The body's limit, known from its first byte (the request's path is known by then).
  private limitBytes: number | undefined
  // This body's bytes counted in bufferedBodyBytes and its network's and site's shares, given back once it
  // has all arrived or is gone.
  private buffered = 0
  // The source whose shares `buffered` counts in, known from the first byte held.
  private source: AddressSource | undefined
  private utf8: TextDecoder | undefined
  /** Whether the body went over its limit (maxBodyBytesOf). */
  tooLarge = false
  /** The budget the body would have gone past: MAX_BUFFERED_BODY_BYTES, or its network's or site's share. */
  overBudget: BodyBudget | undefined
  /** Whether the body held a byte sequence that is not UTF-8. */
  notUtf8 = false
  // The end of a body that is not UTF-8, held back until a reader asks for it.
  private endWithheld = false

  override _read(size: number): void {
    if (!this.endWithheld) {
      super._read(size)
      return
    }
    this.endWithheld = false
    // A reader (the body decoding) listens for errors; Node discarding an unread body does not.
    if (this.listenerCount("error") > 0) this.destroy(new BodyNotUtf8())
    else super.push(null)
  }

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (this.tooLarge || this.overBudget !== undefined) return true
    if (chunk === null) {
      this.releaseBuffered()
      this.checkUtf8(undefined)
      const holder = this.holder
      if (holder !== undefined) {
        holder.ended = true
        holder.whole(this.notUtf8 ? undefined : Buffer.concat(holder.chunks))
        return false
      }
      return this.end(encoding)
    }
    if (chunk instanceof Uint8Array) {
      this.bodyBytes += chunk.length
      this.limitBytes ??= maxBodyBytesOf(this.url ?? "")
      if (this.bodyBytes > this.limitBytes) {
        this.tooLarge = true
        this.refuse(new BodyTooLarge(this.limitBytes))
        return true
      }
      // A body nobody reads is dropped as it comes (Node's dump, after the answer): it holds nothing.
      if (this.dumped) return super.push(chunk, encoding)
      this.source ??= sourceOf(this.socket)
      const { network, site } = this.source
      const overBudget: BodyBudget | undefined =
        bufferedBodyBytes + chunk.length > MAX_BUFFERED_BODY_BYTES
          ? "process"
          : (networkBodyBytes.get(network) ?? 0) + chunk.length > MAX_BUFFERED_BODY_BYTES_PER_NETWORK
            ? "network"
            : site !== undefined &&
                (siteBodyBytes.get(site) ?? 0) + chunk.length > MAX_BUFFERED_BODY_BYTES_PER_SITE
              ? "site"
              : undefined
      if (overBudget !== undefined) {
        this.overBudget = overBudget
        this.refuse(new BodyOverBudget(overBudget))
        return true
      }
      bufferedBodyBytes += chunk.length
      addTo(networkBodyBytes, network, chunk.length)
      addTo(siteBodyBytes, site, chunk.length)
      this.buffered += chunk.length
      this.checkUtf8(chunk)
      if (this.holder !== undefined) {
        this.holder.chunks.push(chunk)
        return true
      }
    }
    return super.push(chunk, encoding)
  }

  // A body over a cap ends its stream: with the failure for a reader (the body decoding, the direct write
  // path), which listens for errors. A body nobody reads yet (its request refused before routing, or its
  // token being looked up) must not fail with no listener: an 'error' event nobody handles ends the process.
  // Its request is answered from the flags (tooLarge, overBudget), and no reader is started for it.
  private refuse(error: Error) {
    this.destroy(this.listenerCount("error") > 0 ? error : undefined)
  }

  // The end of the body, as any reader sees it: a failure for one that reads a body that is not UTF-8.
  private end(encoding?: BufferEncoding): boolean {
    if (!this.notUtf8) return super.push(null, encoding)
    // The body ends in a failure for whoever reads it; one nobody reads just ends (see _read).
    if (this.listenerCount("error") > 0) this.destroy(new BodyNotUtf8())
    else this.endWithheld = true
    return false
  }

  // Who holds the body back from readers (holdBody), and what of it has arrived.
  private holder:
    | {
        readonly chunks: Array<Uint8Array>
        readonly whole: (body: Buffer | undefined) => void
        ended: boolean
      }
    | undefined

  /**
   * Holds the body back from the stream's readers as it arrives, under the same caps and checks, and hands it
   * whole to `whole` once it has all arrived (undefined when it is not UTF-8); then either `consumeBody` or
   * `releaseBody`. A body over a cap destroys the request as it would for any reader.
   */
  holdBody(whole: (body: Buffer | undefined) => void): void {
    this.holder = { chunks: [], whole, ended: false }
  }

  /** Ends the stream with nothing in it: the holder read the body and answered the request. */
  consumeBody(): void {
    this.holder = undefined
    super.push(null)
  }

  /**
   * Gives the held body to the stream's readers as if it arrived now (the chunks held, and its end if it had
   * ended), for whatever else answers the request.
   */
  releaseBody(): void {
    const holder = this.holder
    if (holder === undefined) return
    this.holder = undefined
    for (const chunk of holder.chunks) super.push(chunk)
    if (holder.ended) this.end()
  }

  // A streaming, fatal decoder: a sequence split between two chunks is still read as one.
  private checkUtf8(chunk: Uint8Array | undefined) {
    if (this.notUtf8 || (chunk === undefined && this.utf8 === undefined)) return
    this.utf8 ??= new TextDecoder("utf-8", { fatal: true })
    try {
      if (chunk === undefined) this.utf8.decode()
      else this.utf8.decode(chunk, { stream: true })
    } catch {
      this.notUtf8 = true
    }
  }

  private dumped = false

  // Node drops a body nobody read once its answer is sent: what it held is given back then (its connection
  // may stay open, the rest of the body never coming).
  _dump(): void {
    this.dumped = true
    this.releaseBuffered()
    nodeDump.call(this)
  }

  private releaseBuffered() {
    if (this.buffered === 0 || this.source === undefined) return
    bufferedBodyBytes -= this.buffered
    addTo(networkBodyBytes, this.source.network, -this.buffered)
    addTo(siteBodyBytes, this.source.site, -this.buffered)
    this.buffered = 0
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.releaseBuffered()
    // The socket stays open for the answer; what the client still sends is dropped by push.
    if (this.tooLarge || this.overBudget !== undefined || this.notUtf8) process.nextTick(callback, error)
    else super._destroy(error, callback)
  }
}

/**
 * The budget a request's body was refused for going past while it was read (MAX_BUFFERED_BODY_BYTES, or its
 * network's or site's share), if it was.
 */
export const bodyOverBudget = (request: IncomingMessage): BodyBudget | undefined =>
  request instanceof CappedRequest ? request.overBudget : undefined

/** Whether a request's body went over its limit (maxBodyBytesOf) while it was read. */
export const bodyWasTooLarge = (request: IncomingMessage) =>
  request instanceof CappedRequest && request.tooLarge

/** Whether a request's body held bytes that are not UTF-8. */
export const bodyWasNotUtf8 = (request: IncomingMessage) =>
  request instanceof CappedRequest && request.notUtf8

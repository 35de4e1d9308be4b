import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import { performance } from "node:perf_hooks"
import { Duration, Effect } from "effect"
import { checkedLookup, literalTargetProblem } from "./delivery-target.js"
import { HostLookup, type HostResolver } from "./host-lookup.js"
import type { WebhookHeaders } from "./sign-webhook.js"

/** The most of a response body read: enough for an error text, never the whole of a huge answer. */
export const MAX_RESPONSE_BYTES = 4096

/** How one attempt went: the receiver answered with a status, or no answer came (refused, unreachable, late). */
export type SendOutcome =
  | {
      readonly _tag: "Answered"
      readonly status: number
      /** The `Retry-After` header, as sent. */
      readonly retryAfter: string | undefined
      /** The first MAX_RESPONSE_BYTES of the body at most (none is read from a 2xx). */
      readonly body: string
      readonly durationMs: number
    }
  | { readonly _tag: "NoAnswer"; readonly error: string; readonly durationMs: number }

/** What to send where, and how long to wait. */
export interface WebhookRequest {
  readonly url: string
  readonly body: string
  readonly headers: WebhookHeaders
  readonly timeout: Duration.DurationInput
  readonly allowPrivateTargets: boolean
}

const isSuccess = (status: number) => status >= 200 && status <= 299

// The send itself, its host resolved by `resolve`.
const sendWith = (request: WebhookRequest, resolve: HostResolver) =>
  Effect.async<SendOutcome>((resume) => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    let settled = false
    let outgoing: ClientRequest | undefined
    let incoming: IncomingMessage | undefined
    // Set once the status has come: ends the body read with what was read so far.
    let endBody: (() => void) | undefined
    const finish = (outcome: SendOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      incoming?.destroy()
      outgoing?.destroy()
      resume(Effect.succeed(outcome))
    }
    const noAnswer = (error: string) => finish({ _tag: "NoAnswer", error, durationMs: elapsed() })

    const timeoutMs = Duration.toMillis(Duration.decode(request.timeout))
    const timer = setTimeout(
      () => (endBody === undefined ? noAnswer(`no response within ${timeoutMs} ms`) : endBody()),
      timeoutMs,
    )

    let url: URL
    try {
      url = new URL(request.url)
    } catch {
      noAnswer("the endpoint URL is not valid")
      return
    }
    const refused = literalTargetProblem(url, request.allowPrivateTargets)
    if (refused !== null) {
      noAnswer(refused.message)
      return
    }
    // Checked at registration, and again here: an endpoint registered where plain http was allowed (local
    // development) is not sent to over it where it is not.
    if (url.protocol !== "https:" && !request.allowPrivateTargets) {
      noAnswer("refused: plain http is allowed only for local development (WEBHOOK_ALLOW_PRIVATE_TARGETS)")
      return
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest
    outgoing = send(url, {
      method: "POST",
      agent: false,
      lookup: checkedLookup(request.allowPrivateTargets, resolve),
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(request.body),
        "user-agent": "points-webhooks/1",
        ...request.headers,
      },
    })
    outgoing.on("error", (error) => noAnswer(error.message))
    outgoing.on("response", (response) => {
      incoming = response
      const status = response.statusCode ?? 0
      const answered = (body: string) =>
        finish({
          _tag: "Answered",
          status,
          retryAfter: response.headers["retry-after"],
          body,
          durationMs: elapsed(),
        })
      if (isSuccess(status)) return answered("")
      const chunks: Array<Buffer> = []
      let size = 0
      const done = () => answered(Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString("utf8"))
      endBody = done
      response.on("data", (chunk: Buffer) => {
        chunks.push(chunk)
        size += chunk.length
        if (size >= MAX_RESPONSE_BYTES) done()
      })
      response.on("end", done)
      response.on("error", done)
    })
    outgoing.end(request.body)
    return Effect.sync(() => {
      settled = true
      clearTimeout(timer)
      incoming?.destroy()
      outgoing?.destroy()
    })
  })

/**
 * POSTs one webhook on a connection of its own: the host is resolved (HostLookup) and checked (private
 * targets refused unless allowed) and the socket connects to the checked address; the status must come
 * within `timeout`; of a non-2xx answer at most MAX_RESPONSE_BYTES of the body are read (until the timeout),
 * then the connection is closed. Never fails: every way it can go is an outcome to record. Interrupting it aborts the
 * request.
 */
export const sendWebhook = (request: WebhookRequest): Effect.Effect<SendOutcome> =>
  Effect.flatMap(HostLookup, (resolve) => sendWith(request, resolve))

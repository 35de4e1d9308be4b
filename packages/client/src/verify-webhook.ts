import { PublicEventResource } from "@points/domain"
import { Effect, Either, ParseResult, Schema } from "effect"
import { Webhook, WebhookVerificationError } from "standardwebhooks"
import type { PublicEvent } from "./contract-types.js"

/**
 * A webhook request that must not be acted on: unsigned, signed with another secret, signed more than five
 * minutes from now (a replayed capture), or not a public event of the contract. Answer it with a 4xx.
 */
export class WebhookRejected extends Schema.TaggedError<WebhookRejected>()("WebhookRejected", {
  problem: Schema.String,
}) {
  override get message() {
    return `webhook rejected: ${this.problem}`
  }
}

/** A received webhook request, as your HTTP framework hands it over. */
export interface ReceivedWebhook {
  /**
   * The endpoint's signing secret (`whsec_…`), or several: after a rotation, deliveries are signed with the
   * new secret and, for 24 hours, the old one too, so a receiver that still holds only the old one verifies.
   */
  readonly secrets: string | ReadonlyArray<string>
  /** The body exactly as received, before any JSON parsing (re-serialised JSON no longer verifies). */
  readonly body: string | Uint8Array
  /** The request's headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`), in any letter case. */
  readonly headers: Headers | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}

const utf8 = new TextDecoder("utf-8", { fatal: true })
const decodeEvent = Schema.decodeUnknownEither(Schema.parseJson(PublicEventResource))

// One value per header name, lower-cased; a repeated Standard Webhooks header is refused, not joined.
const headerRecord = (headers: ReceivedWebhook["headers"]) => {
  const entries: Array<[string, string | ReadonlyArray<string> | undefined]> =
    headers instanceof Headers ? [...headers.entries()] : Object.entries(headers)
  const record: Record<string, string> = {}
  for (const [name, value] of entries) {
    if (value === undefined) continue
    if (typeof value !== "string") return Either.left(`the ${name.toLowerCase()} header is repeated`)
    record[name.toLowerCase()] = value
  }
  return Either.right(record)
}

const webhooksOf = (secrets: ReceivedWebhook["secrets"]) =>
  Effect.try({
    try: () => (typeof secrets === "string" ? [secrets] : secrets).map((secret) => new Webhook(secret)),
    catch: () => "a signing secret is not a whsec_ secret",
  }).pipe(Effect.orDieWith((problem) => new Error(problem)))

/**
 * Verifies a webhook request as Standard Webhooks says (an HMAC-SHA256 signature over
 * `<webhook-id>.<webhook-timestamp>.<body>` with one of `secrets`, a timestamp within five minutes) and
 * decodes its body as the contract's public event, whose `id` must be the `webhook-id` (deduplicate on it:
 * deliveries are at least once, and a replay keeps it). A malformed secret is a defect: a misconfiguration,
 * not a bad request.
 */
export const verifyWebhook = (received: ReceivedWebhook): Effect.Effect<PublicEvent, WebhookRejected> =>
  Effect.gen(function* () {
    const reject = (problem: string) => Effect.fail(new WebhookRejected({ problem }))
    const webhooks = yield* webhooksOf(received.secrets)
    const headers = headerRecord(received.headers)
    if (Either.isLeft(headers)) return yield* reject(headers.left)
    const body = yield* Effect.try({
      try: () => (typeof received.body === "string" ? received.body : utf8.decode(received.body)),
      catch: () => new WebhookRejected({ problem: "the body is not UTF-8" }),
    })
    // Every secret is tried: only when none verifies is the first one's reason reported.
    const reasons = webhooks.map((webhook) => {
      try {
        webhook.verify(body, headers.right, { jsonParse: false })
        return undefined
      } catch (error) {
        return error instanceof WebhookVerificationError ? error.message : String(error)
      }
    })
    if (!reasons.includes(undefined)) return yield* reject(reasons[0] ?? "no signing secret given")
    const event = decodeEvent(body)
    if (Either.isLeft(event)) {
      const detail = ParseResult.TreeFormatter.formatErrorSync(event.left)
      return yield* reject(`the body is not a public event: ${detail}`)
    }
    if (event.right.id !== headers.right["webhook-id"]) {
      return yield* reject("the body's id is not the webhook-id header")
    }
    return event.right
  })

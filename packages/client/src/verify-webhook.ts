import { PublicEventResource, WebhookEndpoint } from "@points/domain"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
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

/**
 * A delivery signed with the endpoint's secret whose event type this client does not know (one a later
 * version of the platform adds): genuine, but not decoded. Acknowledge it (answer 2xx) unless you want it
 * retried until you upgrade; `data` is the event's resource as sent.
 */
export class UnknownWebhookEvent extends Schema.TaggedError<UnknownWebhookEvent>()("UnknownWebhookEvent", {
  id: Schema.String,
  type: Schema.String,
  timestamp: Schema.String,
  data: Schema.Unknown,
}) {
  override get message() {
    return `webhook of an event type this client does not know: ${this.type}`
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

// An event object of a type this client may not know: what an unknown event still has.
const decodeAnyEvent = Schema.decodeUnknownEither(
  Schema.parseJson(
    Schema.Struct({ id: Schema.String, type: Schema.String, timestamp: Schema.String, data: Schema.Unknown }),
  ),
)
const knownTypes: ReadonlySet<string> = new Set(WebhookEndpoint.publicEventTypes)

const signatureHeaders = ["webhook-id", "webhook-timestamp", "webhook-signature"]

// The Standard Webhooks headers, one value each, by lower-case name; one of them repeated is refused, not
// joined. Other headers (Node gives `set-cookie` as an array) are not looked at.
const headerRecord = (headers: ReceivedWebhook["headers"]) => {
  const entries: Array<[string, string | ReadonlyArray<string> | undefined]> =
    headers instanceof Headers ? [...headers.entries()] : Object.entries(headers)
  const record: Record<string, string> = {}
  for (const [given, value] of entries) {
    const name = given.toLowerCase()
    if (value === undefined || !signatureHeaders.includes(name)) continue
    if (typeof value !== "string") return Either.left(`the ${name} header is repeated`)
    record[name] = value
  }
  return Either.right(record)
}

// The library takes any base64 text as a secret, so a secret missing its prefix (or none at all) would only
// ever fail to verify, quietly: a misconfiguration, made loud.
const webhooksOf = (secrets: ReceivedWebhook["secrets"]) => {
  // Read from the environment, a secret is often `undefined` at run time whatever its type says.
  const given: ReadonlyArray<unknown> =
    typeof secrets === "string" ? [secrets] : Array.isArray(secrets) ? secrets : []
  if (given.length === 0) return Effect.dieMessage("no signing secret given")
  const unset = given.findIndex((secret) => typeof secret !== "string" || secret === "")
  if (unset !== -1)
    return Effect.dieMessage(`signing secret ${unset + 1} of ${given.length} is empty or not set`)
  return Effect.try({
    try: () =>
      (given as ReadonlyArray<string>).map((secret) => {
        if (!secret.startsWith("whsec_")) throw new Error("no whsec_ prefix")
        return new Webhook(secret)
      }),
    catch: () => "a signing secret is not a whsec_ secret",
  }).pipe(Effect.orDieWith((problem) => new Error(problem)))
}

/**
 * Verifies a webhook request as Standard Webhooks says (an HMAC-SHA256 signature over
 * `<webhook-id>.<webhook-timestamp>.<body>` with one of `secrets`, a timestamp within five minutes) and
 * decodes its body as the contract's public event, whose `id` must be the `webhook-id` (deduplicate on it:
 * deliveries are at least once, and a replay keeps it). A genuine event of a type this client does not know
 * is UnknownWebhookEvent. A malformed secret, or none, is a defect: a misconfiguration, not a bad request.
 */
export const verifyWebhook = (
  received: ReceivedWebhook,
): Effect.Effect<PublicEvent, WebhookRejected | UnknownWebhookEvent> =>
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
    const other = Either.isLeft(event) ? Either.getRight(decodeAnyEvent(body)) : Option.none()
    if (Option.isSome(other) && !knownTypes.has(other.value.type)) {
      if (other.value.id !== headers.right["webhook-id"]) {
        return yield* reject("the body's id is not the webhook-id header")
      }
      return yield* new UnknownWebhookEvent(other.value)
    }
    if (Either.isLeft(event)) {
      const detail = ParseResult.TreeFormatter.formatErrorSync(event.left)
      return yield* reject(`the body is not a public event: ${detail}`)
    }
    if (event.right.id !== headers.right["webhook-id"]) {
      return yield* reject("the body's id is not the webhook-id header")
    }
    return event.right
  })

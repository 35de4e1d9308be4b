import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect } from "effect"
import { Webhook } from "standardwebhooks"
import { UnknownWebhookEvent, verifyWebhook, WebhookRejected } from "../src/index.js"
import { userCreatedEvent } from "./fixtures.js"

const secret = `whsec_${Buffer.from("a".repeat(32)).toString("base64")}`
const oldSecret = `whsec_${Buffer.from("b".repeat(32)).toString("base64")}`

/** A delivery as the server sends it: the body, and its Standard Webhooks headers signed with `secrets`. */
const delivery = (options: {
  readonly id?: string
  readonly body?: string
  readonly at?: Date
  readonly secrets?: ReadonlyArray<string>
}) => {
  const id = options.id ?? "ev-1"
  const body = options.body ?? JSON.stringify(userCreatedEvent(id, "u-1"))
  const at = options.at ?? new Date()
  return {
    body,
    headers: {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": (options.secrets ?? [secret])
        .map((key) => new Webhook(key).sign(id, at, body))
        .join(" "),
    },
  }
}

const rejection = (received: Parameters<typeof verifyWebhook>[0]) =>
  Effect.map(Effect.flip(verifyWebhook(received)), (error) => {
    expect(error).toBeInstanceOf(WebhookRejected)
    return error._tag === "WebhookRejected" ? error.problem : error.message
  })

describe("verifyWebhook", () => {
  it.effect("returns the public event of a delivery signed with the endpoint's secret", () =>
    Effect.gen(function* () {
      const { body, headers } = delivery({})
      const event = yield* verifyWebhook({ secrets: secret, body, headers })
      expect(event).toEqual(userCreatedEvent("ev-1", "u-1"))
      // The raw bytes and a Headers object (e.g. fetch's Request) serve as well.
      const fromBytes = yield* verifyWebhook({
        secrets: [secret],
        body: new TextEncoder().encode(body),
        headers: new Headers(headers),
      })
      expect(fromBytes.id).toBe("ev-1")
    }),
  )

  it.effect("verifies with either secret during a rotation", () =>
    Effect.gen(function* () {
      // During the 24 hours after a rotation the server signs with both.
      const both = delivery({ secrets: [secret, oldSecret] })
      expect((yield* verifyWebhook({ secrets: oldSecret, ...both })).id).toBe("ev-1")
      // A receiver that holds both verifies a delivery signed with the new one only.
      const newOnly = delivery({})
      expect((yield* verifyWebhook({ secrets: [oldSecret, secret], ...newOnly })).id).toBe("ev-1")
    }),
  )

  it.effect("rejects a forged, altered, stale or unsigned delivery", () =>
    Effect.gen(function* () {
      const valid = delivery({})
      expect(yield* rejection({ secrets: oldSecret, ...valid })).toBe("No matching signature found")
      expect(yield* rejection({ secrets: secret, ...valid, body: valid.body.replace("u-1", "u-2") })).toBe(
        "No matching signature found",
      )
      const stale = delivery({ at: new Date(Date.now() - 10 * 60_000) })
      expect(yield* rejection({ secrets: secret, ...stale })).toBe("Message timestamp too old")
      const { "webhook-signature": _, ...unsigned } = valid.headers
      expect(yield* rejection({ secrets: secret, body: valid.body, headers: unsigned })).toBe(
        "Missing required headers",
      )
      const repeated = { ...valid.headers, "webhook-signature": [valid.headers["webhook-signature"]] }
      expect(yield* rejection({ secrets: secret, body: valid.body, headers: repeated })).toBe(
        "the webhook-signature header is repeated",
      )
    }),
  )

  it.effect("rejects a signed body that is not a public event of its webhook-id", () =>
    Effect.gen(function* () {
      const otherId = delivery({ id: "ev-2", body: JSON.stringify(userCreatedEvent("ev-1", "u-1")) })
      expect(yield* rejection({ secrets: secret, ...otherId })).toBe(
        "the body's id is not the webhook-id header",
      )
      const notAnEvent = delivery({ body: JSON.stringify({ id: "ev-1", type: "user.deleted" }) })
      expect(yield* rejection({ secrets: secret, ...notAnEvent })).toMatch(/^the body is not a public event/)
      const notJson = delivery({ body: "ok" })
      expect(yield* rejection({ secrets: secret, ...notJson })).toMatch(/^the body is not a public event/)
      const notUtf8 = delivery({})
      const bytes = new Uint8Array([0xff, 0xfe])
      expect(yield* rejection({ secrets: secret, headers: notUtf8.headers, body: bytes })).toBe(
        "the body is not UTF-8",
      )
    }),
  )

  it.effect("treats a secret that is not a whsec_ secret, or none, as a defect", () =>
    Effect.gen(function* () {
      const signed = delivery({})
      // "abcd" and "c2VjcmV0c2VjcmV0" are base64 the library would take as secrets, failing every delivery.
      for (const secrets of [
        "",
        "whsec_",
        "not a secret!",
        "abcd",
        "c2VjcmV0c2VjcmV0",
        [],
        [secret, "abcd"],
      ]) {
        const exit = yield* Effect.exit(verifyWebhook({ secrets, ...signed }))
        expect(exit._tag === "Failure" && exit.cause._tag, JSON.stringify(secrets)).toBe("Die")
      }
      // An unset environment variable, whatever the types said: the misconfiguration is named, not a TypeError.
      const dies = [
        [undefined, "no signing secret given"],
        [[undefined], "signing secret 1 of 1 is empty or not set"],
        [[secret, undefined], "signing secret 2 of 2 is empty or not set"],
      ] as const
      for (const [secrets, problem] of dies) {
        const exit = yield* Effect.exit(
          verifyWebhook({ secrets: secrets as unknown as ReadonlyArray<string>, ...signed }),
        )
        expect(exit._tag === "Failure" ? Cause.pretty(exit.cause) : "", String(secrets)).toContain(problem)
      }
    }),
  )

  it.effect("gives a genuine event of a type it does not know as UnknownWebhookEvent, to acknowledge", () =>
    Effect.gen(function* () {
      const later = {
        id: "ev-9",
        type: "points.expired",
        timestamp: "2026-11-22T10:00:00.000Z",
        data: { a: 1 },
      }
      const signed = delivery({ id: "ev-9", body: JSON.stringify(later) })
      const unknown = yield* Effect.flip(verifyWebhook({ secrets: secret, ...signed }))
      expect(unknown).toBeInstanceOf(UnknownWebhookEvent)
      expect(unknown).toMatchObject(later)
      // Still signed with the secret, and still the delivery's own event.
      const forged = delivery({ id: "ev-9", body: JSON.stringify(later), secrets: [oldSecret] })
      expect(yield* rejection({ secrets: secret, ...forged })).toMatch(/signature/i)
      const otherId = delivery({ id: "ev-8", body: JSON.stringify(later) })
      expect(yield* rejection({ secrets: secret, ...otherId })).toBe(
        "the body's id is not the webhook-id header",
      )
      // A known type that does not decode is still refused.
      const broken = delivery({ body: JSON.stringify({ ...userCreatedEvent("ev-1", "u-1"), data: {} }) })
      expect(yield* rejection({ secrets: secret, ...broken })).toMatch(/^the body is not a public event/)
    }),
  )

  it.effect(
    "looks only at the Standard Webhooks headers: another header given as an array is no matter",
    () =>
      Effect.gen(function* () {
        const signed = delivery({})
        const event = yield* verifyWebhook({
          secrets: secret,
          body: signed.body,
          headers: { ...signed.headers, "set-cookie": ["a=1", "b=2"] },
        })
        expect(event.id).toBe("ev-1")
        const repeated = {
          ...signed.headers,
          "Webhook-Signature": [signed.headers["webhook-signature"], "v1,x"],
        }
        const { "webhook-signature": _, ...rest } = repeated
        expect(yield* rejection({ secrets: secret, body: signed.body, headers: rest })).toBe(
          "the webhook-signature header is repeated",
        )
      }),
  )
})

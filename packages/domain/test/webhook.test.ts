import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, TestClock } from "effect"
import {
  EndpointDisabled,
  InvalidParams,
  LimitReached,
  ResourceNotFound,
  SigningSecretId,
  WebhookEndpoint,
  WebhookEndpointId,
} from "../src/index.js"
import { checkCatalogRoundTrip, DeciderSpecification, replay } from "../src/testing/index.js"
import { epoch, partnerId } from "./fixtures.js"
import { second } from "./idempotency-fixtures.js"

const { decider, WebhookUrl } = WebhookEndpoint
const spec = DeciderSpecification.for(decider)
const endpointId = WebhookEndpointId.make("01936b2e-0000-7000-8000-0000000000e1")
const firstSecret = SigningSecretId.make("01936b2e-0000-7000-8000-0000000000f1")
const secondSecret = SigningSecretId.make("01936b2e-0000-7000-8000-0000000000f2")
const thirdSecret = SigningSecretId.make("01936b2e-0000-7000-8000-0000000000f3")
const fourthSecret = SigningSecretId.make("01936b2e-0000-7000-8000-0000000000f4")
const url = WebhookUrl.make("https://hooks.acme.example/points")
const DAY = 86_400

const createEndpoint = (
  overrides: Partial<ConstructorParameters<typeof WebhookEndpoint.CreateEndpoint>[0]> = {},
) =>
  WebhookEndpoint.CreateEndpoint.make({
    endpointId,
    partnerId,
    url,
    eventTypes: ["order.status_changed", "order.created", "order.created"],
    description: "order updates",
    enabled: true,
    secretId: firstSecret,
    allowPrivateTargets: false,
    endpointsOfPartner: 0,
    ...overrides,
  })
const created = WebhookEndpoint.WebhookEndpointCreated.make({
  endpointId,
  partnerId,
  url,
  eventTypes: ["order.created", "order.status_changed"],
  description: "order updates",
  enabled: true,
  secretId: firstSecret,
  at: epoch,
})
const update = (
  fields: Omit<
    ConstructorParameters<typeof WebhookEndpoint.UpdateEndpoint>[0],
    "endpointId" | "allowPrivateTargets"
  >,
) => WebhookEndpoint.UpdateEndpoint.make({ endpointId, allowPrivateTargets: false, ...fields })
const updated = (fields: Partial<ConstructorParameters<typeof WebhookEndpoint.WebhookEndpointUpdated>[0]>) =>
  WebhookEndpoint.WebhookEndpointUpdated.make({
    endpointId,
    url: created.url,
    eventTypes: created.eventTypes,
    description: created.description,
    enabled: created.enabled,
    at: epoch,
    ...fields,
  })
const disabled = (reason: WebhookEndpoint.DisabledReason) =>
  WebhookEndpoint.WebhookEndpointDisabled.make({ endpointId, reason, at: epoch })
const deleted = WebhookEndpoint.WebhookEndpointDeleted.make({ endpointId, at: epoch })
const rotated = (at: number, secretId = secondSecret, previousSecretId = firstSecret, grace = DAY) =>
  WebhookEndpoint.WebhookSecretRotated.make({
    endpointId,
    secretId,
    previousSecretId,
    previousValidUntil: second(at + grace),
    at: second(at),
  })
const rotate = (secretId = secondSecret, gracePeriodSeconds = DAY) =>
  WebhookEndpoint.RotateEndpointSecret.make({ endpointId, secretId, gracePeriodSeconds })
const notFound = new ResourceNotFound({ resource: "webhook endpoint", id: endpointId })
const privateTarget = new InvalidParams({
  field: "url",
  problem: "must not point to a private or loopback address",
})

describe("Webhook endpoint: creation", () => {
  it.effect("creates an endpoint; its types are kept once each, in canonical order", () =>
    spec.given([]).when(createEndpoint()).then([created]),
  )

  it.effect(
    "refuses a private or loopback target, and plain http, unless private targets are allowed (GH1006)",
    () =>
      Effect.gen(function* () {
        const local = WebhookUrl.make("http://127.0.0.1:4000/hooks")
        yield* spec
          .given([])
          .when(createEndpoint({ url: WebhookUrl.make("https://10.1.2.3/hooks") }))
          .thenFails(privateTarget)
        yield* spec
          .given([])
          .when(createEndpoint({ url: WebhookUrl.make("http://hooks.acme.example/points") }))
          .thenFails(new InvalidParams({ field: "url", problem: "must use https" }))
        yield* spec
          .given([])
          .when(createEndpoint({ url: local, allowPrivateTargets: true }))
          .then([WebhookEndpoint.WebhookEndpointCreated.make({ ...created, url: local })])
        expect(privateTarget.message).toBe("url must not point to a private or loopback address")
        expect(privateTarget.code).toBe("GH1006")
      }),
  )

  it.effect("refuses a partner's endpoint beyond the twentieth (LE0007); the twentieth is created", () =>
    Effect.gen(function* () {
      yield* spec
        .given([])
        .when(createEndpoint({ endpointsOfPartner: 19 }))
        .then([created])
      const full = new LimitReached({ resource: "webhook endpoints", limit: 20 })
      yield* spec
        .given([])
        .when(createEndpoint({ endpointsOfPartner: 20 }))
        .thenFails(full)
      yield* spec
        .given([])
        .when(createEndpoint({ endpointsOfPartner: 35 }))
        .thenFails(full)
      expect(WebhookEndpoint.MAX_WEBHOOK_ENDPOINTS).toBe(20)
      expect([full.code, full.status, full.message]).toEqual([
        "LE0007",
        409,
        "limit reached: a partner has at most 20 webhook endpoints",
      ])
    }),
  )

  it.effect("an empty type list subscribes to every type; a disabled endpoint to none", () =>
    Effect.gen(function* () {
      const all = replay(decider, [
        WebhookEndpoint.WebhookEndpointCreated.make({ ...created, eventTypes: [] }),
      ])
      expect(WebhookEndpoint.publicEventTypes.every((type) => WebhookEndpoint.subscribesTo(all, type))).toBe(
        true,
      )
      const some = replay(decider, [created])
      expect(WebhookEndpoint.subscribesTo(some, "order.created")).toBe(true)
      expect(WebhookEndpoint.subscribesTo(some, "points.added")).toBe(false)
      expect(
        WebhookEndpoint.subscribesTo(replay(decider, [created, disabled("gone")]), "order.created"),
      ).toBe(false)
      expect(WebhookEndpoint.subscribesTo(replay(decider, [created, deleted]), "order.created")).toBe(false)
      expect(WebhookEndpoint.subscribesTo(decider.initialState, "order.created")).toBe(false)
    }),
  )

  it.effect("a second creation of one id is a bug, not a retry", () =>
    Effect.gen(function* () {
      yield* spec.given([created]).when(createEndpoint()).thenBreaksInvariant()
      yield* spec.given([created, deleted]).when(createEndpoint()).thenBreaksInvariant()
    }),
  )
})

describe("Webhook endpoint: updates", () => {
  it.effect(
    "records the full new settings; an absent field keeps its value, a null description clears it",
    () =>
      Effect.gen(function* () {
        const moved = WebhookUrl.make("https://hooks.acme.example/v2")
        yield* spec
          .given([created])
          .when(update({ url: moved, description: null }))
          .then([updated({ url: moved, description: null })])
        yield* spec
          .given([created])
          .when(update({ eventTypes: ["user.created", "points.added", "user.created"] }))
          .then([updated({ eventTypes: ["user.created", "points.added"] })])
      }),
  )

  it.effect("an update that changes nothing records nothing", () =>
    Effect.gen(function* () {
      yield* spec.given([created]).when(update({})).thenNothingHappens()
      yield* spec
        .given([created])
        .when(
          update({
            url,
            eventTypes: ["order.status_changed", "order.created"],
            description: "order updates",
            enabled: true,
          }),
        )
        .thenNothingHappens()
    }),
  )

  it.effect("refuses a new target that is private, and checks nothing when the url is not given", () =>
    Effect.gen(function* () {
      yield* spec
        .given([created])
        .when(update({ url: WebhookUrl.make("https://[::ffff:192.168.0.10]/hooks") }))
        .thenFails(privateTarget)
      const local = WebhookEndpoint.WebhookEndpointCreated.make({
        ...created,
        url: WebhookUrl.make("http://localhost:4000/hooks"),
      })
      yield* spec
        .given([local])
        .when(update({ description: "local" }))
        .then([
          WebhookEndpoint.WebhookEndpointUpdated.make({
            endpointId,
            url: local.url,
            eventTypes: local.eventTypes,
            description: "local",
            enabled: true,
            at: epoch,
          }),
        ])
    }),
  )

  it.effect("an unknown or deleted endpoint is LE0002 for every command", () =>
    Effect.gen(function* () {
      const commands = [
        update({ enabled: false }),
        rotate(),
        WebhookEndpoint.DisableEndpoint.make({ endpointId, reason: "failing" }),
        WebhookEndpoint.DeleteEndpoint.make({ endpointId }),
      ]
      for (const command of commands) {
        yield* spec.given([]).when(command).thenFails(notFound)
        yield* spec.given([created, deleted]).when(command).thenFails(notFound)
      }
      expect(notFound.code).toBe("LE0002")
      expect(notFound.message).toBe("webhook endpoint not found")
    }),
  )

  it.effect("deletes an endpoint", () =>
    Effect.gen(function* () {
      yield* spec.given([created]).when(WebhookEndpoint.DeleteEndpoint.make({ endpointId })).then([deleted])
      expect(replay(decider, [created, deleted])).toEqual({
        _tag: "Deleted",
        endpointId,
        partnerId,
        deletedAt: epoch,
      })
    }),
  )
})

describe("Webhook endpoint: disabling", () => {
  it.effect("the platform disables an endpoint once (410 Gone, or failing for 5 days)", () =>
    Effect.gen(function* () {
      yield* spec
        .given([created])
        .when(WebhookEndpoint.DisableEndpoint.make({ endpointId, reason: "gone" }))
        .then([disabled("gone")])
      yield* spec
        .given([created, disabled("gone")])
        .when(WebhookEndpoint.DisableEndpoint.make({ endpointId, reason: "failing" }))
        .thenNothingHappens()
      yield* spec
        .given([created, updated({ enabled: false })])
        .when(WebhookEndpoint.DisableEndpoint.make({ endpointId, reason: "failing" }))
        .thenNothingHappens()
    }),
  )

  it.effect("the partner re-enables it, which clears the platform's reason", () =>
    Effect.gen(function* () {
      const history = [created, disabled("failing")]
      const state = replay(decider, history)
      expect(state._tag === "Live" && state.disabledReason).toBe("failing")
      yield* spec
        .given(history)
        .when(update({ enabled: true }))
        .then([updated({ enabled: true })])
      const enabledAgain = replay(decider, [...history, updated({ enabled: true })])
      expect(enabledAgain._tag === "Live" && enabledAgain.disabledReason).toBeNull()
      const renamed = replay(decider, [...history, updated({ enabled: false, description: "x" })])
      expect(renamed._tag === "Live" && renamed.disabledReason).toBe("failing")
    }),
  )
})

describe("Webhook endpoint: replay", () => {
  const targetOf = (history: ReadonlyArray<WebhookEndpoint.WebhookEndpointEvent>) =>
    Effect.either(WebhookEndpoint.replayTarget(replay(decider, history), endpointId))
  const refused = new EndpointDisabled({ endpointId })

  it.effect("replays to an enabled endpoint, the state it was decided on", () =>
    Effect.gen(function* () {
      const target = yield* WebhookEndpoint.replayTarget(replay(decider, [created]), endpointId)
      expect(target).toMatchObject({ endpointId, enabled: true, eventTypes: created.eventTypes })
      const enabledAgain = yield* targetOf([created, disabled("gone"), updated({ enabled: true })])
      expect(enabledAgain._tag).toBe("Right")
    }),
  )

  it.effect(
    "refuses a disabled endpoint (LE0008), whoever disabled it; LE0002 an unknown or deleted one",
    () =>
      Effect.gen(function* () {
        for (const history of [
          [created, disabled("gone")],
          [created, disabled("failing")],
          [created, updated({ enabled: false })],
          [WebhookEndpoint.WebhookEndpointCreated.make({ ...created, enabled: false })],
        ]) {
          expect(yield* targetOf(history)).toEqual(Either.left(refused))
        }
        expect(yield* targetOf([])).toEqual(Either.left(notFound))
        expect(yield* targetOf([created, deleted])).toEqual(Either.left(notFound))
        expect([refused.code, refused.status, refused.message]).toEqual([
          "LE0008",
          409,
          'webhook endpoint is disabled: enable it with PATCH {"enabled": true} before replaying',
        ])
      }),
  )
})

describe("Webhook endpoint: signing secrets", () => {
  it.effect("a rotation keeps the old secret signing for the grace period only", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust(Duration.seconds(300))
      yield* spec
        .given([created])
        .when(rotate())
        .then([rotated(300)])
      const state = replay(decider, [created, rotated(300)])
      expect(WebhookEndpoint.signingSecretIds(state, second(300))).toEqual([secondSecret, firstSecret])
      expect(WebhookEndpoint.signingSecretIds(state, second(300 + DAY - 1))).toEqual([
        secondSecret,
        firstSecret,
      ])
      expect(WebhookEndpoint.signingSecretIds(state, second(300 + DAY))).toEqual([secondSecret])
    }),
  )

  it.effect(
    "a second rotation ends the first replaced secret's grace at once: two secrets sign, never more",
    () =>
      Effect.gen(function* () {
        yield* TestClock.adjust(Duration.seconds(600))
        yield* spec
          .given([created, rotated(300)])
          .when(rotate(thirdSecret, 60))
          .then([rotated(600, thirdSecret, secondSecret, 60)])
        const state = replay(decider, [created, rotated(300), rotated(600, thirdSecret, secondSecret, 60)])
        // The first secret was replaced at 300 for a day, but the second rotation ended that: only the second,
        // replaced at 600 for a minute, signs beside the third.
        expect(WebhookEndpoint.signingSecretIds(state, second(600))).toEqual([thirdSecret, secondSecret])
        expect(WebhookEndpoint.signingSecretIds(state, second(660))).toEqual([thirdSecret])
        expect(state._tag === "Live" && state.previousSecret?.secretId).toBe(secondSecret)
        const later = replay(decider, [
          created,
          rotated(300),
          rotated(600, thirdSecret, secondSecret, 60),
          rotated(700, fourthSecret, thirdSecret),
        ])
        expect(WebhookEndpoint.signingSecretIds(later, second(700))).toEqual([fourthSecret, thirdSecret])
        expect(WebhookEndpoint.signingSecretIds(later, second(700 + DAY))).toEqual([fourthSecret])
      }),
  )

  it("an absent or deleted endpoint signs with nothing", () => {
    expect(WebhookEndpoint.signingSecretIds(decider.initialState, epoch)).toEqual([])
    expect(WebhookEndpoint.signingSecretIds(replay(decider, [created, deleted]), epoch)).toEqual([])
  })
})

describe("Webhook endpoint: stream", () => {
  it("refuses an impossible stream while replaying it", () => {
    expect(() => replay(decider, [deleted])).toThrow("WebhookEndpointDeleted while the endpoint is Absent")
    expect(() => replay(decider, [created, deleted, updated({})])).toThrow("while the endpoint is Deleted")
    expect(() => replay(decider, [created, disabled("gone"), disabled("gone")])).toThrow(
      "on a disabled endpoint",
    )
  })

  it.effect("events round-trip through the store", () =>
    checkCatalogRoundTrip(WebhookEndpoint.webhookEndpointEvents),
  )
})

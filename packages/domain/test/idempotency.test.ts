import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, TestClock } from "effect"
import { IdempotencyKey, IdempotencyKeyInProgress, IdempotencyKeyReused } from "../src/index.js"
import { checkCatalogRoundTrip, DeciderSpecification, replay } from "../src/testing/index.js"
import { partnerId } from "./fixtures.js"
import {
  claimKey,
  created,
  createOrder,
  createOtherOrder,
  key,
  keyClaimed,
  keyExpired,
  keyReleased,
  LEASE_SECONDS,
  LIFETIME_SECONDS,
  responseRecorded,
  second,
} from "./idempotency-fixtures.js"

const { decider } = IdempotencyKey
const spec = DeciderSpecification.for(decider)
const wait = (seconds: number) => TestClock.adjust(Duration.seconds(seconds))
const record = (response: IdempotencyKey.RecordedResponse) =>
  IdempotencyKey.RecordResponse.make({ partnerId, key, response })
const respond = (status: number) => record({ status, headers: {}, body: `{"status":${status}}` })
const release = IdempotencyKey.ReleaseKey.make({ partnerId, key })
const expire = IdempotencyKey.ExpireKey.make({ partnerId, key })

describe("Idempotency key: claims", () => {
  it.effect("a first request claims the key for its lease, and the key lives 24 h from now", () =>
    Effect.gen(function* () {
      yield* wait(7)
      yield* spec
        .given([])
        .when(claimKey())
        .then([keyClaimed({ at: 7 })])
    }),
  )

  it.effect("a request arriving while the key's request runs gets IK1002 and executes nothing", () =>
    Effect.gen(function* () {
      yield* wait(LEASE_SECONDS - 1)
      yield* spec
        .given([keyClaimed({ at: 0 })])
        .when(claimKey())
        .thenFails(new IdempotencyKeyInProgress())
    }),
  )

  it.effect("a different request with the key gets IK1001 naming what differs, checked before IK1002", () =>
    Effect.gen(function* () {
      yield* spec
        .given([keyClaimed({ at: 0 })])
        .when(claimKey(createOtherOrder))
        .thenFails(new IdempotencyKeyReused({ differs: ["body"] }))
      const cancel = { ...createOrder, path: "/api/orders/01936b2e-0000-7000-8000-0000000000d1/cancel" }
      const refusal = yield* Effect.flip(
        decider.decide(claimKey(cancel), replay(decider, [keyClaimed({ at: 0 }), responseRecorded(1)])),
      )
      expect(refusal).toEqual(new IdempotencyKeyReused({ differs: ["path"] }))
      expect(refusal.code).toBe("IK1001")
      expect(refusal.status).toBe(422)
      expect(refusal.message).toBe("Idempotency-Key was already used with a different request (path differs)")
    }),
  )

  it.effect("a claim whose lease ran out (its process died) is taken over, in the same lifetime", () =>
    Effect.gen(function* () {
      yield* wait(LEASE_SECONDS)
      yield* spec
        .given([keyClaimed({ at: 0 })])
        .when(claimKey())
        .then([keyClaimed({ at: LEASE_SECONDS, first: 0, takeover: true })])
      yield* spec
        .given([keyClaimed({ at: 0 })])
        .when(claimKey(createOtherOrder))
        .thenFails(new IdempotencyKeyReused({ differs: ["body"] }))
    }),
  )

  it.effect(
    "a completed key replays its response: the claim changes nothing and the decision carries it",
    () =>
      Effect.gen(function* () {
        yield* wait(3600)
        const history = [keyClaimed({ at: 0 }), responseRecorded(2)]
        yield* spec.given(history).when(claimKey()).thenNothingHappens()
        const decision = IdempotencyKey.claimDecision(
          replay(decider, history),
          { fingerprint: createOrder },
          second(3600),
        )
        expect(decision).toEqual(Either.right(IdempotencyKey.ClaimDecision.Replay({ response: created })))
        yield* spec
          .given(history)
          .when(claimKey(createOtherOrder))
          .thenFails(new IdempotencyKeyReused({ differs: ["body"] }))
      }),
  )

  it.effect(
    "a released key is free again (DESIGN.md section 4): the same or another request runs, as on a new key",
    () =>
      Effect.gen(function* () {
        yield* wait(100)
        const history = [keyClaimed({ at: 0 }), keyReleased(5, 422)]
        yield* spec
          .given(history)
          .when(claimKey())
          .then([keyClaimed({ at: 100 })])
        const other = { ...createOrder, method: "PUT", path: "/api/points/add" }
        yield* spec
          .given(history)
          .when(claimKey(other))
          .then([keyClaimed({ at: 100, fingerprint: other })])
        // Then it belongs to the request that claimed it.
        yield* spec
          .given([...history, keyClaimed({ at: 100, fingerprint: other }), responseRecorded(100)])
          .when(claimKey())
          .thenFails(new IdempotencyKeyReused({ differs: ["method", "path"] }))
      }),
  )

  it.effect("after its lifetime a key starts afresh for any request: the old lifetime expires first", () =>
    Effect.gen(function* () {
      yield* wait(LIFETIME_SECONDS)
      yield* spec
        .given([keyClaimed({ at: 0 }), responseRecorded(2)])
        .when(claimKey(createOtherOrder))
        .then([
          keyExpired(LIFETIME_SECONDS),
          keyClaimed({ at: LIFETIME_SECONDS, fingerprint: createOtherOrder }),
        ])
      yield* spec
        .given([keyClaimed({ at: 0 }), keyExpired(LIFETIME_SECONDS)])
        .when(claimKey(createOtherOrder))
        .then([keyClaimed({ at: LIFETIME_SECONDS, fingerprint: createOtherOrder })])
    }),
  )

  it.effect("a request still within its lease keeps the key even past its lifetime", () =>
    Effect.gen(function* () {
      // Released near the end of its lifetime, then claimed again: the new lease outlasts the lifetime.
      const history = [
        keyClaimed({ at: 0 }),
        keyReleased(1, null),
        keyClaimed({ at: LIFETIME_SECONDS - 1, first: 0 }),
      ]
      yield* wait(LIFETIME_SECONDS)
      yield* spec.given(history).when(claimKey(createOtherOrder)).thenFails(new IdempotencyKeyInProgress())
      yield* spec.given(history).when(expire).thenNothingHappens()
    }),
  )
})

describe("Idempotency key: responses", () => {
  it.effect("records every 2xx and 400, 401, 404, 409, 429", () =>
    Effect.forEach([200, 201, 202, 204, 299, 400, 401, 404, 409, 429], (status) =>
      spec
        .given([keyClaimed({ at: 0 })])
        .when(respond(status))
        .then([responseRecorded(0, { status, headers: {}, body: `{"status":${status}}` })]),
    ),
  )

  it.effect("releases the key for any other status (422, 5xx, ...), so the same request may run again", () =>
    Effect.forEach([100, 301, 403, 413, 415, 422, 500, 502, 503, 504], (status) =>
      spec
        .given([keyClaimed({ at: 0 })])
        .when(respond(status))
        .then([keyReleased(0, status)]),
    ),
  )

  it("isRecordable follows the published list", () => {
    expect([200, 201, 204, 400, 401, 404, 409, 429].every(IdempotencyKey.isRecordable)).toBe(true)
    expect([199, 300, 402, 403, 405, 422, 500, 503].some(IdempotencyKey.isRecordable)).toBe(false)
  })

  it.effect("a released claim gives the key back; a redelivered identical record changes nothing", () =>
    Effect.gen(function* () {
      yield* spec
        .given([keyClaimed({ at: 0 })])
        .when(release)
        .then([keyReleased(0, null)])
      yield* spec
        .given([keyClaimed({ at: 0 }), responseRecorded(1)])
        .when(record(created))
        .thenNothingHappens()
    }),
  )

  it.effect("a key completes at most once: a different second response is a broken invariant", () =>
    spec
      .given([keyClaimed({ at: 0 }), responseRecorded(1)])
      .when(respond(409))
      .thenBreaksInvariant("at most one response"),
  )

  it.effect("only a claimed key takes a response or a release", () =>
    Effect.gen(function* () {
      const released = [keyClaimed({ at: 0 }), keyReleased(1, 503)]
      const completed = [keyClaimed({ at: 0 }), responseRecorded(1)]
      yield* spec.given([]).when(respond(201)).thenBreaksInvariant()
      yield* spec.given([]).when(release).thenBreaksInvariant()
      yield* spec.given(released).when(respond(201)).thenBreaksInvariant()
      yield* spec.given(released).when(release).thenBreaksInvariant()
      yield* spec.given(completed).when(release).thenBreaksInvariant()
    }),
  )
})

describe("Idempotency key: expiry", () => {
  it.effect("expires a key only once its lifetime is over", () =>
    Effect.gen(function* () {
      const history = [keyClaimed({ at: 0 }), responseRecorded(1)]
      yield* spec.given([]).when(expire).thenNothingHappens()
      yield* wait(LIFETIME_SECONDS - 1)
      yield* spec.given(history).when(expire).thenNothingHappens()
      yield* wait(1)
      yield* spec
        .given(history)
        .when(expire)
        .then([keyExpired(LIFETIME_SECONDS)])
      yield* spec
        .given([keyClaimed({ at: 0 })])
        .when(expire)
        .then([keyExpired(LIFETIME_SECONDS)])
      yield* spec
        .given([...history, keyExpired(LIFETIME_SECONDS)])
        .when(expire)
        .thenNothingHappens()
    }),
  )

  it.effect("an expired key remembers nothing of its old request", () =>
    Effect.gen(function* () {
      yield* wait(LIFETIME_SECONDS + 10)
      const state = replay(decider, [
        keyClaimed({ at: 0 }),
        responseRecorded(1),
        keyExpired(LIFETIME_SECONDS),
      ])
      expect(state._tag).toBe("Expired")
      expect(
        IdempotencyKey.claimDecision(state, { fingerprint: createOtherOrder }, second(LIFETIME_SECONDS + 10)),
      ).toEqual(Either.right(IdempotencyKey.ClaimDecision.Execute()))
    }),
  )
})

describe("Idempotency key: fingerprints and streams", () => {
  it("differingParts names each part that differs, in order", () => {
    expect(IdempotencyKey.differingParts(createOrder, createOrder)).toEqual([])
    expect(
      IdempotencyKey.differingParts(createOrder, {
        method: "PATCH",
        path: "/api/users/x",
        bodySha256: "c".repeat(64),
      }),
    ).toEqual(["method", "path", "body"])
  })

  it("refuses an impossible stream while replaying it", () => {
    expect(() => replay(decider, [responseRecorded(0)])).toThrow(
      "ResponseRecorded while the key is Unclaimed",
    )
    expect(() => replay(decider, [keyClaimed({ at: 0 }), keyClaimed({ at: 1 })])).toThrow(
      "without a takeover",
    )
    expect(() =>
      replay(decider, [keyClaimed({ at: 0 }), responseRecorded(1), keyClaimed({ at: 2 })]),
    ).toThrow("completed key")
    expect(() => replay(decider, [keyExpired(0)])).toThrow("KeyExpired while the key is Unclaimed")
  })

  it.effect("events round-trip through the store", () =>
    checkCatalogRoundTrip(IdempotencyKey.idempotencyKeyEvents),
  )
})

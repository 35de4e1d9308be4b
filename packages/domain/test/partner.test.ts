import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { Partner } from "../src/index.js"
import { checkCatalogRoundTrip, DeciderSpecification, replay } from "../src/testing/index.js"
import { epoch, partnerId } from "./fixtures.js"
import { second } from "./idempotency-fixtures.js"

const spec = DeciderSpecification.for(Partner.decider)
const register = Partner.RegisterPartner.make({ partnerId, name: "Acme Rewards" })
const registered = Partner.PartnerRegistered.make({ partnerId, name: "Acme Rewards", at: epoch })

describe("Partner", () => {
  it.effect("registers a partner, stamped with the clock", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust(Duration.seconds(42))
      yield* spec
        .given([])
        .when(register)
        .then([Partner.PartnerRegistered.make({ ...registered, at: second(42) })])
      expect(replay(Partner.decider, [registered])).toEqual({
        _tag: "Registered",
        partnerId,
        name: "Acme Rewards",
        createdAt: epoch,
      })
    }),
  )

  it.effect("a second registration of one id is a bug, not a retry", () =>
    Effect.gen(function* () {
      yield* spec.given([registered]).when(register).thenBreaksInvariant("partner id already registered")
      expect(() => replay(Partner.decider, [registered, registered])).toThrow("PartnerRegistered twice")
    }),
  )

  it("refuses a name that is empty or too long", () => {
    expect(() => Partner.RegisterPartner.make({ partnerId, name: "" })).toThrow("must not be empty")
    expect(() => Partner.RegisterPartner.make({ partnerId, name: "n".repeat(201) })).toThrow("at most 200")
  })

  it.effect("events round-trip through the store", () => checkCatalogRoundTrip(Partner.partnerEvents))
})

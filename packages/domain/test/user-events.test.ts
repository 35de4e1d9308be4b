import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Either } from "effect"
import { EventVersionNotSupported, eventCatalog, UnknownEventType, User } from "../src/index.js"
import { checkCatalogRoundTrip } from "../src/testing/index.js"
import { partnerId, userId } from "./fixtures.js"

describe("User events in the store", () => {
  it.effect("round-trip through encode and decode", () => checkCatalogRoundTrip(User.userEvents))

  it.effect("refuse an unknown type and a version from a newer release", () =>
    Effect.gen(function* () {
      const unknown = yield* Effect.flip(
        User.userEvents.decode({ type: "UserRenamed", version: 1, data: {} }),
      )
      expect(unknown).toBeInstanceOf(UnknownEventType)
      const newer = yield* Effect.flip(User.userEvents.decode({ type: "UserClosed", version: 2, data: {} }))
      expect(newer).toEqual(new EventVersionNotSupported({ type: "UserClosed", version: 2, current: 1 }))
    }),
  )

  it.effect("upcast an old payload step by step to the current schema", () =>
    Effect.gen(function* () {
      // Suppose version 1 of UserRegistered had `fullName`, and version 2 renamed it to `name` (nullable).
      const catalog = eventCatalog([User.UserRegistered], {
        UserRegistered: { 1: ({ fullName, ...rest }) => ({ ...rest, name: fullName ?? null }) },
      })
      expect(catalog.versionOf("UserRegistered")).toBe(2)
      const v1 = {
        userId,
        partnerId,
        partnerUserId: "p-1",
        email: "ada@example.com",
        fullName: "Ada",
        at: "1970-01-01T00:00:00.000Z",
      }
      const event = yield* catalog.decode({ type: "UserRegistered", version: 1, data: v1 })
      expect(event.name).toBe("Ada")
      expect(DateTime.toEpochMillis(event.at)).toBe(0)
      expect(catalog.encode(event)).toMatchObject({
        type: "UserRegistered",
        version: 2,
        data: { name: "Ada" },
      })
      const bad = yield* Effect.either(
        catalog.decode({ type: "UserRegistered", version: 2, data: { userId } }),
      )
      expect(Either.isLeft(bad)).toBe(true)
    }),
  )
})

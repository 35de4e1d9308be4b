import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { AlreadyClosed, Email, OrderId, PartnerUserId, ResourceNotFound, User, UserId } from "../src/index.js"
import { DeciderSpecification, replay, SpecificationFailure, sequentialId } from "../src/testing/index.js"
import { epoch, partnerId, userId } from "./fixtures.js"

// The kit is what other teams trust to tell them their decider is wrong, so each step is checked both ways.
const spec = DeciderSpecification.for(User.decider)
const registered = User.UserRegistered.make({
  userId,
  partnerId,
  partnerUserId: PartnerUserId.make("p-1"),
  email: Email.make("ada@example.com"),
  name: null,
  at: epoch,
})
const activated = User.UserActivated.make({ userId, at: epoch })
const close = User.CloseUser.make({ userId })
const closed = User.UserClosed.make({ userId, at: epoch })

/** The SpecificationFailure a step died with; fails the test when the step passed. */
const failureOf = (step: Effect.Effect<void>) =>
  Effect.map(Effect.exit(step), (exit) => {
    const defect = Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()
    expect(Option.getOrUndefined(defect)).toBeInstanceOf(SpecificationFailure)
    return Option.getOrThrow(defect) as SpecificationFailure
  })

describe("DeciderSpecification", () => {
  it.effect("then: passes on the exact events, fails with a diff on others or on a refusal", () =>
    Effect.gen(function* () {
      yield* spec.given([registered, activated]).when(close).then([closed])
      const other = yield* failureOf(spec.given([registered, activated]).when(close).then([activated]))
      expect(other.actual).toEqual([closed])
      expect(other.expected).toEqual([activated])
      const refused = yield* failureOf(spec.given([]).when(close).then([closed]))
      expect(refused.message).toContain("ResourceNotFound")
      // The diff shows the refusal beside the events expected.
      expect(refused.actual).toEqual(new ResourceNotFound({ resource: "user", id: userId }))
      expect(refused.expected).toEqual([closed])
    }),
  )

  it.effect(
    "thenFailsWithCode: passes on the code whatever the fields, fails on another code or success",
    () =>
      Effect.gen(function* () {
        yield* spec.given([]).when(close).thenFailsWithCode("LE0002")
        const other = yield* failureOf(spec.given([]).when(close).thenFailsWithCode("LE0004"))
        expect(other.actual).toEqual(new ResourceNotFound({ resource: "user", id: userId }))
        expect(other.expected).toBe("LE0004")
        const accepted = yield* failureOf(
          spec.given([registered, activated]).when(close).thenFailsWithCode("LE0002"),
        )
        expect(accepted.message).toContain("succeeded")
        yield* spec.given([registered, activated, closed]).when(close).thenFailsWithCode("LE0004")
        // A code the decider cannot refuse with does not type-check (a user refuses with LE0001, LE0002, LE0004).
        // @ts-expect-error
        yield* failureOf(spec.given([]).when(close).thenFailsWithCode("LE2002"))
      }),
  )

  it.effect("thenFails: passes on an equal error, fails on another error, other fields, or success", () =>
    Effect.gen(function* () {
      yield* spec
        .given([])
        .when(close)
        .thenFails(new ResourceNotFound({ resource: "user", id: userId }))
      yield* failureOf(
        spec
          .given([])
          .when(close)
          .thenFails(new AlreadyClosed({ resource: "user", id: userId })),
      )
      yield* failureOf(
        spec
          .given([])
          .when(close)
          .thenFails(new ResourceNotFound({ resource: "user", id: "other" })),
      )
      yield* failureOf(
        spec
          .given([registered, activated])
          .when(close)
          .thenFails(new ResourceNotFound({ resource: "user", id: userId })),
      )
    }),
  )

  it.effect("thenNothingHappens and thenEvents", () =>
    Effect.gen(function* () {
      yield* spec.given([registered, activated]).when(User.ActivateUser.make({ userId })).thenNothingHappens()
      yield* failureOf(spec.given([registered, activated]).when(close).thenNothingHappens())
      let seen: ReadonlyArray<User.UserEvent> = []
      yield* spec
        .given([registered, activated])
        .when(close)
        .thenEvents((events) => {
          seen = events
        })
      expect(seen).toEqual([closed])
    }),
  )

  it.effect("thenBreaksInvariant: passes on a corrupt history, fails when the command is fine", () =>
    Effect.gen(function* () {
      yield* spec.given([registered, registered]).when(close).thenBreaksInvariant("UserRegistered twice")
      const succeeded = yield* failureOf(
        spec.given([registered, activated]).when(close).thenBreaksInvariant(),
      )
      expect(succeeded.message).toBe("expected an InvariantViolation, but the command succeeded")
      expect(succeeded.actual).toEqual({ events: [closed] })
      const refused = yield* failureOf(spec.given([]).when(close).thenBreaksInvariant())
      expect(refused.actual).toEqual({ refused: new ResourceNotFound({ resource: "user", id: userId }) })
      yield* failureOf(
        spec.given([registered, registered]).when(close).thenBreaksInvariant("another message"),
      )
    }),
  )

  it("a specification awaited without its last step is rejected at once, saying how to finish it", async () => {
    // What a plain `it` (or `await`) does with it: it calls `then(resolve, reject)`.
    const unfinished = spec.given([registered, activated]).when(close) as unknown as PromiseLike<unknown>
    const awaited = Promise.resolve(unfinished)
    await expect(awaited).rejects.toBeInstanceOf(SpecificationFailure)
    await expect(awaited).rejects.toThrow(/a specification was awaited/)
  })

  it("a finished specification that is awaited (returned from a plain `it`) is rejected, not passed unrun", async () => {
    // A wrong expectation: closing an active user is no refusal. Awaited, it must not pass.
    const steps = [
      spec
        .given([registered, activated])
        .when(close)
        .thenFails(new ResourceNotFound({ resource: "user", id: userId })),
      spec.given([registered, activated]).when(close).then([]),
      spec.given([registered, activated]).when(close).thenNothingHappens(),
      spec
        .given([registered, activated])
        .when(close)
        .thenEvents(() => undefined),
      spec.given([registered, activated]).when(close).thenBreaksInvariant(),
    ]
    for (const step of steps) {
      const awaited = Promise.resolve(step as unknown as PromiseLike<unknown>)
      await expect(awaited).rejects.toBeInstanceOf(SpecificationFailure)
      await expect(awaited).rejects.toThrow(/a finished specification was awaited instead of run/)
    }
  })

  it.effect("a finished specification still runs as the Effect it is: yielded, and run by the runtime", () =>
    Effect.gen(function* () {
      yield* spec.given([registered, activated]).when(close).then([closed])
      const wrong = yield* failureOf(spec.given([registered, activated]).when(close).thenNothingHappens())
      expect(wrong.message).toBe("expected no events")
      const exit = yield* Effect.promise(() =>
        // Outside the test's clock: the event's time is now, so only its count is checked.
        Effect.runPromiseExit(
          spec
            .given([registered, activated])
            .when(close)
            .thenEvents((events) => expect(events).toHaveLength(1)),
        ),
      )
      expect(exit._tag).toBe("Success")
    }),
  )

  it.effect("a specification run as an Effect without its last step fails with the same message", () =>
    Effect.gen(function* () {
      // vitest does not type check a test file, so what the compiler refuses (a When step is no Effect) still
      // runs: it.effect suspends what its function returns and runs it, and Effect.gen runs what is yielded.
      const unfinished = spec.given([registered, activated]).when(close) as unknown as Effect.Effect<void>
      const returned = yield* failureOf(Effect.suspend(() => unfinished))
      const yielded = yield* failureOf(
        Effect.gen(function* () {
          yield* unfinished
        }),
      )
      const awaited = yield* Effect.flip(Effect.tryPromise(async () => await unfinished))
      expect(awaited.cause).toBeInstanceOf(SpecificationFailure)
      const message = (awaited.cause as SpecificationFailure).message
      expect(message).toMatch(
        /finish it with then\/thenFails\/thenFailsWithCode\/thenNothingHappens\/thenBreaksInvariant\/thenEvents/,
      )
      expect(returned.message).toBe(message)
      expect(yielded.message).toBe(message)
    }),
  )

  it("replay folds a stream into the decider's state", () => {
    const state = replay(User.decider, [registered, activated, closed])
    expect(state._tag === "Registered" && state.status).toBe("closed")
    expect(state._tag === "Registered" && state.version).toBe(3)
    expect(replay(User.decider, [])).toBe(User.decider.initialState)
  })
})

describe("sequentialId", () => {
  it("makes the same valid UUID v7 for the same number, a different one for another, in their order", () => {
    expect(UserId.make(sequentialId(1))).toBe("00000000-0000-7000-8000-000000000001")
    expect(OrderId.make(sequentialId(0xffff_ffff_ffff))).toBe("00000000-0000-7000-8000-ffffffffffff")
    const ids = [0, 1, 15, 16, 4096, 2 ** 40].map(sequentialId)
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
    for (const bad of [-1, 1.5, 2 ** 48, Number.NaN]) {
      expect(() => sequentialId(bad)).toThrow(RangeError)
    }
  })
})

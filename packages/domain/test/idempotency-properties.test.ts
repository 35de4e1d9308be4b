import { describe, expect, it } from "@effect/vitest"
import { Cause, Clock, DateTime, Effect, Either, Exit, FastCheck, Option } from "effect"
import { IdempotencyKey, InvariantViolation } from "../src/index.js"
import { partnerId } from "./fixtures.js"
import { createOrder, createOtherOrder, key } from "./idempotency-fixtures.js"

// Short lease and lifetime, so that random clock moves cross both often.
const LEASE = 30
const LIFETIME = 300
const fingerprints = [createOrder, createOtherOrder] as const
const statuses = [200, 201, 204, 400, 401, 404, 409, 422, 429, 500, 502, 503] as const

type Step =
  | { readonly kind: "claim"; readonly request: 0 | 1 }
  | { readonly kind: "record"; readonly status: number; readonly body: string }
  | { readonly kind: "release" }
  | { readonly kind: "expire" }
  | { readonly kind: "wait"; readonly seconds: number }

const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
  {
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("claim" as const),
      request: FastCheck.constantFrom<0 | 1>(0, 1),
    }),
    weight: 4,
  },
  {
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("record" as const),
      status: FastCheck.constantFrom(...statuses),
      body: FastCheck.string({ maxLength: 8 }),
    }),
    weight: 3,
  },
  { arbitrary: FastCheck.constant({ kind: "release" } as const), weight: 1 },
  { arbitrary: FastCheck.constant({ kind: "expire" } as const), weight: 1 },
  {
    arbitrary: FastCheck.record({
      kind: FastCheck.constant("wait" as const),
      seconds: FastCheck.oneof(
        FastCheck.integer({ min: 0, max: 2 * LEASE }),
        FastCheck.integer({ min: 0, max: LIFETIME }),
      ),
    }),
    weight: 3,
  },
)

const commandOf = (step: Exclude<Step, { kind: "wait" }>): IdempotencyKey.IdempotencyKeyCommand => {
  switch (step.kind) {
    case "claim":
      return IdempotencyKey.ClaimKey.make({
        partnerId,
        key,
        fingerprint: fingerprints[step.request],
        leaseSeconds: LEASE,
        lifetimeSeconds: LIFETIME,
      })
    case "record":
      return IdempotencyKey.RecordResponse.make({
        partnerId,
        key,
        response: { status: step.status, headers: { "Content-Type": "application/json" }, body: step.body },
      })
    case "release":
      return IdempotencyKey.ReleaseKey.make({ partnerId, key })
    case "expire":
      return IdempotencyKey.ExpireKey.make({ partnerId, key })
  }
}

const isInvariantViolation = (cause: Cause.Cause<unknown>) =>
  Option.exists(Cause.dieOption(cause), (defect) => defect instanceof InvariantViolation)

// TestClock yields to a real timer on every move (milliseconds each), too slow for hundreds of sequences; this
// clock moves only when told, which is all the decider reads.
const manualClock = () => {
  let millis = 0
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => millis,
    currentTimeMillis: Effect.sync(() => millis),
    unsafeCurrentTimeNanos: () => BigInt(millis) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(millis) * 1_000_000n),
    sleep: () => Effect.void,
  }
  const advance = (seconds: number) => {
    millis += seconds * 1000
  }
  return { clock, now: () => DateTime.unsafeMake(millis), advance }
}

const runSequence = (steps: ReadonlyArray<Step>) => {
  const { decider } = IdempotencyKey
  const time = manualClock()
  let state = decider.initialState
  // The model, kept from the events alone: the lease of the running claim and this lifetime's response.
  let runningLease: DateTime.Utc | null = null
  let recorded: IdempotencyKey.RecordedResponse | null = null
  for (const current of steps) {
    if (current.kind === "wait") {
      time.advance(current.seconds)
      continue
    }
    const now = time.now()
    const command = commandOf(current)
    const exit = Effect.runSync(
      Effect.exit(decider.decide(command, state)).pipe(Effect.withClock(time.clock)),
    )
    if (Exit.isFailure(exit)) {
      // Refusals are IK1001/IK1002 for claims; a response or release without a claim breaks an invariant.
      if (command._tag === "ClaimKey") {
        const code = Option.map(Cause.failureOption(exit.cause), (error) => error.code)
        expect(Option.getOrNull(code)).toBeOneOf(["IK1001", "IK1002"])
      } else {
        expect(isInvariantViolation(exit.cause)).toBe(true)
        expect(state._tag).not.toBe("Claimed")
      }
      continue
    }
    const events = exit.value
    if (command._tag === "ClaimKey" && events.length === 0) {
      const decision = IdempotencyKey.claimDecision(state, command, now)
      expect(Either.map(decision, (made) => made._tag)).toEqual(Either.right("Replay"))
      if (Either.isRight(decision) && decision.right._tag === "Replay") {
        expect(decision.right.response).toEqual(recorded)
      }
    }
    for (const event of events) {
      switch (event._tag) {
        case "KeyClaimed":
          expect(runningLease === null || DateTime.greaterThanOrEqualTo(now, runningLease)).toBe(true)
          runningLease = event.leaseExpiresAt
          break
        case "ResponseRecorded":
          expect(recorded).toBeNull()
          recorded = event.response
          runningLease = null
          break
        case "KeyReleased":
          runningLease = null
          break
        case "KeyExpired":
          expect(runningLease === null || DateTime.greaterThanOrEqualTo(now, runningLease)).toBe(true)
          recorded = null
          runningLease = null
          break
      }
      state = decider.evolve(state, event)
    }
  }
}

describe("Idempotency key properties", () => {
  it("under any sequence of requests, responses and clock moves: at most one response per lifetime, replays return it, and no claim runs beside a running lease", () => {
    FastCheck.assert(FastCheck.property(FastCheck.array(step, { maxLength: 40 }), runSequence), {
      numRuns: 500,
    })
  })
})

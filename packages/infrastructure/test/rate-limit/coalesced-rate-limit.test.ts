import { expect, layer } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import { consumeRateLimit, makeCoalescedRateLimit } from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"

const policy = { ratePerSecond: 0.01, burst: 10 }

layer(testDatabase({ poolSize: 10 }), { excludeTestServices: true })("makeCoalescedRateLimit", (it) => {
  it.scoped(
    "decides a key's concurrent requests exactly as one at a time would: the burst, then refusals",
    () =>
      Effect.gen(function* () {
        const limiter = yield* makeCoalescedRateLimit
        const key = `partner:${newId()}`
        const decisions = yield* Effect.forEach(
          Array.from({ length: 16 }),
          () => limiter.consume(key, policy),
          {
            concurrency: "unbounded",
          },
        )
        const allowed = decisions.filter((decision) => decision.allowed)
        expect(allowed).toHaveLength(10)
        // Each allowed request saw its own place in the bucket: 9 left after the first, ..., 0 after the tenth.
        expect(allowed.map((decision) => decision.remaining).sort((a, b) => a - b)).toEqual([
          0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
        ])
        for (const refused of decisions.filter((decision) => !decision.allowed)) {
          expect(refused.remaining).toBe(0)
          expect(refused.retryAfterSeconds).toBeGreaterThan(0)
        }
        // The bucket is empty for everyone else too.
        expect((yield* consumeRateLimit(key, policy)).allowed).toBe(false)
      }),
  )

  it.effect(
    "decides every request after its scope closes (queued ones and later ones) instead of failing or hanging",
    () =>
      Effect.gen(function* () {
        const key = `partner:${newId()}`
        const scope = yield* Scope.make()
        const limiter = yield* Scope.extend(makeCoalescedRateLimit, scope)
        // Queued while the scope closes (a server still finishing its requests): they used to die with
        // "the rate limiter stopped", and one queued after the close waited forever.
        const queued = yield* Effect.fork(
          Effect.forEach(Array.from({ length: 6 }), () => limiter.consume(key, policy), {
            concurrency: "unbounded",
          }),
        )
        yield* Scope.close(scope, Exit.void)
        const late = yield* Effect.forEach(Array.from({ length: 6 }), () => limiter.consume(key, policy), {
          concurrency: "unbounded",
        })
        const early = yield* Fiber.join(queued)
        // Still one bucket: the burst of 10 went to ten of the twelve, in whatever order they were decided.
        expect([...early, ...late].filter((decision) => decision.allowed)).toHaveLength(10)
      }).pipe(Effect.timeout("20 seconds")),
  )

  it.scoped("keeps keys apart, and takes a key's requests together when its bucket holds them all", () =>
    Effect.gen(function* () {
      const limiter = yield* makeCoalescedRateLimit
      const keys = [`partner:${newId()}`, `partner:${newId()}`]
      const decisions = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, n) => keys[n % 2] ?? ""),
        (key) => limiter.consume(key, policy),
        { concurrency: "unbounded" },
      )
      expect(decisions.every((decision) => decision.allowed)).toBe(true)
      for (const key of keys) {
        const next = yield* consumeRateLimit(key, policy)
        expect(next.allowed).toBe(false)
      }
    }),
  )
})

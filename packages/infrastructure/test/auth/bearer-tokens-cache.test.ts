import { randomBytes } from "node:crypto"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { expect, layer } from "@effect/vitest"
import { InvalidToken, PartnerId } from "@points/domain"
import { Deferred, Effect, Fiber, Option } from "effect"
import { vi } from "vitest"
import { accessTokenHash, uuidV7 } from "../../src/index.js"
import { serviceDatabase } from "../services/service-fixtures.js"
import { bearerTokensWith, heldPrincipal } from "./auth-fixtures.js"

// A full collection on demand, to weigh what a loop left behind (V8's gc, exposed for this test only).
setFlagsFromString("--expose-gc")
const collectGarbage = runInNewContext("gc") as () => void

const valid = `pos_at_${"V".repeat(43)}`
const madeUp = `pos_at_${"M".repeat(43)}`

const heapAfterCollection = () => {
  collectGarbage()
  collectGarbage()
  return process.memoryUsage().heapUsed
}

layer(serviceDatabase(), { excludeTestServices: true })(
  "BearerTokens' cache: what it keeps, and its shared lookups",
  (it) => {
    it.scoped(
      "keeps nothing of them: a network sending made-up tokens cannot grow the process's memory",
      () =>
        Effect.gen(function* () {
          const tokens = yield* bearerTokensWith({ ttlSeconds: 60, capacity: 10_000 })
          const made = Array.from(
            { length: 100_000 },
            () => `pos_at_${randomBytes(32).toString("base64url")}`,
          )
          // Once before weighing, so that whatever is made once (compiled code, the first entries) is not counted.
          for (const token of made.slice(0, 1_000)) yield* tokens.held(token)
          const before = heapAfterCollection()
          for (const token of made) expect(Option.isNone(yield* heldPrincipal(tokens, token))).toBe(true)
          const grown = heapAfterCollection() - before
          // Kept per token asked, each recorded as a cache access, it was ~100 bytes: ~10 MB here.
          expect(grown).toBeLessThan(2 * 1_048_576)
        }),
    )

    it.scoped("keeps nothing of the lookups it makes again and again: expired answers, refused tokens", () =>
      Effect.gen(function* () {
        // Looked up without the database: a valid token whose answer may not be kept (it expires at once, as
        // a token in use does each TOKEN_CACHE_SECONDS), and a made-up one refused each time it is sent.
        const principal = { partnerId: PartnerId.make(uuidV7()), clientId: "client", tokenId: "token" }
        const tokens = yield* bearerTokensWith({ ttlSeconds: 60, capacity: 10_000 }, (hash) =>
          hash === accessTokenHash(valid)
            ? Effect.succeed({ principal, expiresInMs: 0 })
            : Effect.fail(new InvalidToken({ reason: "unknown" })),
        )
        // Each round a millisecond later (Date faked, which Effect's clock reads; timers left real): the
        // answer kept for 0 ms has expired.
        const both = Effect.zipRight(
          Effect.zipRight(tokens.authenticate(valid), Effect.flip(tokens.authenticate(madeUp))),
          Effect.sync(() => vi.setSystemTime(Date.now() + 1)),
        )
        vi.useFakeTimers({ toFake: ["Date"] })
        const grown = yield* Effect.gen(function* () {
          for (let n = 0; n < 1_000; n++) yield* both
          const before = heapAfterCollection()
          for (let n = 0; n < 20_000; n++) yield* both
          return heapAfterCollection() - before
        }).pipe(Effect.ensuring(Effect.sync(() => vi.useRealTimers())))
        // With Effect's Cache it was ~230 bytes a round (4.7 MB here): its list of accesses grew at each lookup.
        expect(grown).toBeLessThan(1_048_576)
      }),
    )

    it.scoped(
      "a request that goes away while its token is looked up fails none of the others waiting on it",
      () =>
        Effect.gen(function* () {
          const principal = { partnerId: PartnerId.make(uuidV7()), clientId: "client", tokenId: "token" }
          const started = yield* Deferred.make<void>()
          const gate = yield* Deferred.make<void>()
          let lookups = 0
          const tokens = yield* bearerTokensWith({ ttlSeconds: 60, capacity: 100 }, () =>
            Effect.gen(function* () {
              lookups++
              yield* Deferred.succeed(started, undefined)
              yield* Deferred.await(gate)
              return { principal, expiresInMs: 60_000 }
            }),
          )
          const first = yield* Effect.fork(tokens.authenticate(valid))
          yield* Deferred.await(started)
          const second = yield* Effect.fork(tokens.authenticate(valid))
          const interrupting = yield* Effect.fork(Fiber.interrupt(first))
          yield* Deferred.succeed(gate, undefined)
          yield* Fiber.join(interrupting)
          expect(yield* Fiber.join(second)).toEqual(principal)
          expect(lookups).toBe(1)
        }),
    )
  },
)

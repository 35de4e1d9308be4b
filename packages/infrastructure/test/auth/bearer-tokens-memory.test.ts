import { randomBytes } from "node:crypto"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { BearerTokens } from "../../src/index.js"
import { serviceDatabase } from "../services/service-fixtures.js"

// A full collection on demand, to weigh what a loop left behind (V8's gc, exposed for this test only).
setFlagsFromString("--expose-gc")
const collectGarbage = runInNewContext("gc") as () => void

const heapAfterCollection = () => {
  collectGarbage()
  collectGarbage()
  return process.memoryUsage().heapUsed
}

layer(serviceDatabase(), { excludeTestServices: true })(
  "BearerTokens, asked about tokens it does not hold",
  (it) => {
    it.scoped(
      "keeps nothing of them: a network sending made-up tokens cannot grow the process's memory",
      () =>
        Effect.gen(function* () {
          const tokens = yield* Effect.map(
            Layer.build(BearerTokens.layer({ ttlSeconds: 60, capacity: 10_000 })),
            Context.get(BearerTokens),
          )
          const made = Array.from(
            { length: 100_000 },
            () => `pos_at_${randomBytes(32).toString("base64url")}`,
          )
          // Once before weighing, so that whatever is made once (compiled code, the first entries) is not counted.
          for (const token of made.slice(0, 1_000)) yield* tokens.remembered(token)
          const before = heapAfterCollection()
          for (const token of made) expect(Option.isNone(yield* tokens.remembered(token))).toBe(true)
          const grown = heapAfterCollection() - before
          // Kept per token asked, each recorded as a cache access, it was ~100 bytes: ~10 MB here.
          expect(grown).toBeLessThan(2 * 1_048_576)
        }),
    )
  },
)

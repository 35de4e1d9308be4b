import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect } from "effect"
import { projectionSettings } from "../src/config.js"

const read = (env: Record<string, string>) =>
  Effect.withConfigProvider(projectionSettings, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("projection settings", () => {
  it.effect("default the fulfilment delay to 5 s and read FULFILMENT_DELAY_MS in milliseconds", () =>
    Effect.gen(function* () {
      expect(Duration.toMillis((yield* read({})).fulfilmentDelay)).toBe(5000)
      expect(Duration.toMillis((yield* read({ FULFILMENT_DELAY_MS: "250" })).fulfilmentDelay)).toBe(250)
      expect(Duration.toMillis((yield* read({ FULFILMENT_DELAY_MS: "0" })).fulfilmentDelay)).toBe(0)
    }),
  )

  it.effect("refuse a bad FULFILMENT_DELAY_MS with a message naming it", () =>
    Effect.gen(function* () {
      for (const bad of ["-1", "soon", "1.5", "86400001"]) {
        const error = yield* Effect.flip(read({ FULFILMENT_DELAY_MS: bad }))
        expect(String(error)).toContain("FULFILMENT_DELAY_MS")
      }
    }),
  )
})

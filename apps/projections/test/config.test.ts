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

  it.effect("run 4 fulfilment loops by default, FULFILMENT_CONCURRENCY from 1 to 64", () =>
    Effect.gen(function* () {
      expect((yield* read({})).fulfilmentConcurrency).toBe(4)
      expect((yield* read({ FULFILMENT_CONCURRENCY: "1" })).fulfilmentConcurrency).toBe(1)
      for (const bad of ["0", "65", "two"]) {
        const error = yield* Effect.flip(read({ FULFILMENT_CONCURRENCY: bad }))
        expect(String(error)).toContain("FULFILMENT_CONCURRENCY")
      }
    }),
  )

  it.effect(
    "read the webhook retry schedule and private-target switch, Standard Webhooks' schedule by default",
    () =>
      Effect.gen(function* () {
        const defaults = yield* read({})
        expect(defaults.webhookRetrySchedule).toEqual([
          0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
        ])
        expect(defaults.webhookAllowPrivateTargets).toBe(false)
        const set = yield* read({ WEBHOOK_RETRY_SCHEDULE: "0, 1,2", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" })
        expect(set.webhookRetrySchedule).toEqual([0, 1, 2])
        expect(set.webhookAllowPrivateTargets).toBe(true)
      }),
  )

  it.effect("refuse a bad WEBHOOK_RETRY_SCHEDULE or WEBHOOK_ALLOW_PRIVATE_TARGETS, naming the variable", () =>
    Effect.gen(function* () {
      for (const bad of ["5,10", "0,x", "", "0,-1"]) {
        const error = yield* Effect.flip(read({ WEBHOOK_RETRY_SCHEDULE: bad }))
        expect(String(error)).toContain("Invalid data at WEBHOOK_RETRY_SCHEDULE: ")
        expect(String(error)).not.toContain("WEBHOOK_RETRY_SCHEDULE.WEBHOOK_RETRY_SCHEDULE")
      }
      const error = yield* Effect.flip(read({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "maybe" }))
      expect(String(error)).toContain("WEBHOOK_ALLOW_PRIVATE_TARGETS")
    }),
  )

  it.effect("share webhook slots 8 per partner by default, WEBHOOK_PARTNER_CONCURRENCY from 1 to 256", () =>
    Effect.gen(function* () {
      expect((yield* read({})).webhookPartnerConcurrency).toBe(8)
      expect((yield* read({ WEBHOOK_PARTNER_CONCURRENCY: "64" })).webhookPartnerConcurrency).toBe(64)
      for (const bad of ["0", "257", "all"]) {
        const error = yield* Effect.flip(read({ WEBHOOK_PARTNER_CONCURRENCY: bad }))
        expect(String(error)).toContain("WEBHOOK_PARTNER_CONCURRENCY")
      }
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

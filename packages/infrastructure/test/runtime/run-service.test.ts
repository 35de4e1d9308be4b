import { describe, expect, it } from "@effect/vitest"
import { Config, ConfigProvider, Effect, Layer } from "effect"
import { serviceProgram } from "../../src/index.js"

describe("serviceProgram", () => {
  it.effect("refuses to start with one message naming every bad setting, the database's included", () =>
    Effect.gen(function* () {
      const failure = yield* Effect.flip(
        serviceProgram({
          name: "a service",
          settings: Config.integer("SERVICE_PORT"),
          layer: Layer.empty,
        }).pipe(
          Effect.withConfigProvider(
            ConfigProvider.fromMap(
              new Map([
                ["DATABASE_POOL_SIZE", "0"],
                ["DATABASE_URL", "postgres-not://user:hunter2@db/points"],
                ["LOG_LEVEL", "loud"],
                ["SERVICE_PORT", "abc"],
              ]),
            ),
          ),
        ),
      )
      // DATABASE_POOL_SIZE was checked later, when the database started: its bad value came alone, after a fix.
      for (const name of ["DATABASE_POOL_SIZE", "DATABASE_URL", "LOG_LEVEL", "SERVICE_PORT"])
        expect(String(failure)).toContain(name)
      // A database URL may hold a password: the message says what is wrong, never the value.
      expect(String(failure)).not.toContain("hunter2")
    }),
  )
})

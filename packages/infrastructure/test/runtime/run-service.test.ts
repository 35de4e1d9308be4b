import { describe, expect, it } from "@effect/vitest"
import { Cause, Config, ConfigProvider, Effect, Layer } from "effect"
import { serviceProgram, startProblemOf } from "../../src/index.js"

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

  it.effect("names a bad variable once, however many of its parts read it", () =>
    Effect.gen(function* () {
      // As `npm start` reads them: the API's settings and the projections', both with the same flag.
      const failure = yield* Effect.flip(
        Config.all([
          Config.boolean("SHARED_FLAG"),
          Config.integer("SERVICE_PORT"),
          Config.boolean("SHARED_FLAG"),
        ]).pipe(
          Effect.withConfigProvider(
            ConfigProvider.fromMap(
              new Map([
                ["SHARED_FLAG", "maybe"],
                ["SERVICE_PORT", "abc"],
              ]),
            ),
          ),
        ),
      )
      const problem = startProblemOf(Cause.fail(failure)) ?? ""
      expect(problem.match(/Invalid data at SHARED_FLAG/g)).toHaveLength(1)
      expect(problem).toMatch(
        /^bad settings: \(Invalid data at SHARED_FLAG: .*maybe.*\) and \(Invalid data at SERVICE_PORT: .*abc.*\)$/,
      )
    }),
  )
})

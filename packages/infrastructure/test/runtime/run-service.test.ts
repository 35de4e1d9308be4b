import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Config, ConfigProvider, Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import {
  DatabaseLive,
  environmentSettings,
  ServiceFault,
  serviceProgram,
  startProblemOf,
} from "../../src/index.js"

describe("serviceProgram", () => {
  it.effect("refuses to start with one message naming every bad setting, the database's included", () =>
    Effect.gen(function* () {
      const failure = yield* Effect.flip(
        serviceProgram({
          name: "a service",
          settings: Config.integer("SERVICE_PORT"),
          lockConnections: 0,
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

  it.effect("refuses a pool that its consumers' locks would take whole, with the other bad settings", () =>
    Effect.gen(function* () {
      const program = (poolSize: string) =>
        serviceProgram({
          name: "a service",
          settings: Config.integer("SERVICE_PORT"),
          lockConnections: 3,
          layer: Layer.empty,
        }).pipe(
          Effect.withConfigProvider(
            ConfigProvider.fromMap(
              new Map([
                ["DATABASE_POOL_SIZE", poolSize],
                ["SERVICE_PORT", "abc"],
              ]),
            ),
          ),
          Effect.flip,
        )
      const problem = startProblemOf(Cause.fail(yield* program("3"))) ?? ""
      expect(problem).toContain(
        'Invalid data at DATABASE_POOL_SIZE: "must be more than 3 here: this process\'s consumers hold 3 of its connections for their locks"',
      )
      expect(problem).toContain("SERVICE_PORT")
      // One more than its locks: only the service's own setting is refused.
      expect(startProblemOf(Cause.fail(yield* program("4")))).not.toContain("DATABASE_POOL_SIZE")
    }),
  )

  it("reads a variable set to nothing as unset, as env files write them", () => {
    const saved = { ...process.env }
    try {
      process.env.POINTS_TEST_EMPTY = ""
      process.env.POINTS_TEST_SET = "7"
      const read = Effect.runSync(
        Config.all([
          Config.option(Config.string("POINTS_TEST_EMPTY")),
          Config.integer("POINTS_TEST_SET"),
        ]).pipe(Effect.withConfigProvider(environmentSettings())),
      )
      expect(read).toEqual([Option.none(), 7])
    } finally {
      process.env = saved
    }
  })

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

  it.scopedLive(
    "ends, failing, when the embedded PostgreSQL under it ends, so that a supervisor restarts the process",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* Effect.acquireRelease(
          Effect.promise(() => mkdtemp(join(tmpdir(), "points-service-"))),
          (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
        )
        // Running once its database is ready (migrated): a layer built after it says so.
        const running = yield* Deferred.make<void>()
        const layer = Layer.effectDiscard(
          Effect.zipRight(SqlClient.SqlClient, Deferred.succeed(running, undefined)),
        ).pipe(Layer.provide(DatabaseLive))
        const settings = new Map([
          ["DATA_DIR", dataDir],
          ["LOG_LEVEL", "OFF"],
        ])
        // What runService does on a fault (start the stop's deadline), seen here.
        let faultsSeen = 0
        // Interrupted with the test's scope if it still runs then (a failed test), stopping its server.
        const program = yield* serviceProgram(
          { name: "a service", settings: Config.succeed(null), lockConnections: 0, layer },
          () => faultsSeen++,
        ).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(settings)), Effect.forkScoped)
        yield* Deferred.await(running).pipe(
          Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error("the service never ran") }),
        )
        const pidFile = join(dataDir, "postgres", "postmaster.pid")
        const postmaster = Number(readFileSync(pidFile, "utf8").split("\n")[0])
        if (!(postmaster > 1)) return yield* Effect.dieMessage(`no postmaster in ${pidFile}`)
        process.kill(postmaster, "SIGKILL")
        const exit = yield* Fiber.await(program).pipe(
          Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("the service ran on") }),
        )
        const fault = Exit.isFailure(exit)
          ? Option.getOrUndefined(Cause.failureOption(exit.cause))
          : undefined
        expect(fault).toBeInstanceOf(ServiceFault)
        expect(faultsSeen).toBe(1)
        expect((fault as ServiceFault).message).toMatch(
          /^the embedded PostgreSQL on DATA_DIR \(.+\) ended \((SIGKILL|exit code \d+)\); restart the process$/,
        )
      }),
    120_000,
  )
})

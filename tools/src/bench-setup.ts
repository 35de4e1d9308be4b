// What the benchmark scripts share: reading their settings from the environment, and an embedded PostgreSQL
// of their own for a run.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Reactivity } from "@effect/experimental"
import { databaseAt, ensureDatabase, startEmbeddedServer } from "@points/infrastructure"
import { Effect, Layer } from "effect"

/** An integer setting from the environment (`fallback` when unset), from 1 to `max`; throws otherwise. */
export const integerSetting = (name: string, fallback: number, max: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!(Number.isInteger(value) && value >= 1 && value <= max)) {
    throw new Error(`${name} must be an integer from 1 to ${max}, not ${process.env[name]}`)
  }
  return value
}

/**
 * Runs `benchmark` on a migrated database `bench` of an embedded server started for it in a temporary
 * directory (pool of `poolSize`), and removes the directory afterwards, whatever happened.
 */
export const onEmbeddedDatabase = async <A, E>(
  name: string,
  poolSize: number,
  benchmark: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof databaseAt>>>,
) => {
  const dataDir = await mkdtemp(join(tmpdir(), `points-bench-${name}-`))
  try {
    return await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* startEmbeddedServer(dataDir)
          yield* ensureDatabase(server.adminUrl, "bench").pipe(Effect.provide(Reactivity.layer))
          const database = databaseAt(server.urlOf("bench"), { poolSize }).pipe(
            Layer.provide(Reactivity.layer),
          )
          return yield* Effect.provide(benchmark, database)
        }),
      ),
    )
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { EmbeddedServerError, StartFailure, startEmbeddedServer, startProblemOf } from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"

layer(testDatabase())("The embedded server", (it) => {
  it.scoped("refuses data a running PostgreSQL holds, naming its process, before starting anything", () =>
    Effect.gen(function* () {
      const dataDir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "points-embedded-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
      )
      // What a running server leaves: a postmaster.pid naming a live PostgreSQL process (here the backend of
      // the test server that serves this test).
      const sql = yield* SqlClient.SqlClient
      const [backend] = yield* sql<{ readonly pid: number }>`SELECT pg_backend_pid() AS pid`
      const pid = backend?.pid ?? 0
      yield* Effect.promise(async () => {
        await mkdir(join(dataDir, "postgres"))
        await writeFile(join(dataDir, "postgres", "postmaster.pid"), `${pid}\n${dataDir}\n`)
      })
      const exit = yield* Effect.exit(startEmbeddedServer(dataDir))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isSuccess(exit)) return
      const failure = Cause.failureOption(exit.cause)
      expect(failure._tag === "Some" && failure.value).toBeInstanceOf(StartFailure)
      expect(startProblemOf(exit.cause)).toContain(`is in use by process ${pid}`)
    }),
  )
})

describe("A start failure of the embedded server", () => {
  it("says in one line what the embedded server could not do", () => {
    const cause = Cause.fail(new EmbeddedServerError({ step: "start", cause: new Error("port 5432 taken") }))
    expect(startProblemOf(cause)).toBe("the embedded PostgreSQL (DATA_DIR) could not start: port 5432 taken")
  })
})

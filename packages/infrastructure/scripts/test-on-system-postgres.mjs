// The second pass of the infrastructure tests: the same suite against the machine's PostgreSQL at
// 127.0.0.1:5432 (user postgres, trust auth), as CI requires. Skipped, saying so, only when it is unreachable.
import { spawnSync } from "node:child_process"
import pg from "pg"

const url = process.env.SYSTEM_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
try {
  await client.connect()
  const { rows } = await client.query("SHOW server_version")
  await client.end()
  console.log(`second pass: infrastructure tests on the system PostgreSQL ${rows[0].server_version} (${url})`)
} catch (error) {
  console.log(`second pass SKIPPED: the system PostgreSQL at ${url} is not reachable (${error.message})`)
  process.exit(0)
}
// The embedded server's own tests start servers of their own whatever DATABASE_URL says: the first pass ran
// them, and a second would test nothing new (about half a minute of the CI run's ten).
const run = spawnSync("npx", ["vitest", "run", "--exclude", "test/database/embedded-server.test.ts"], {
  stdio: "inherit",
  env: { ...process.env, DATABASE_URL: url },
})
process.exit(run.status ?? 1)

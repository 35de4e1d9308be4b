// HTTP benchmark: POST /api/points/add through the whole API (authentication, rate limit, idempotency, unit
// of work, inline read models) on its embedded PostgreSQL, against a minimal baseline (bare node:http + pg:
// insert the key, insert one event, record the response) on the same PostgreSQL server. Both take the same
// load from autocannon: 64 connections for BENCH_SECONDS (20) after a short warm-up, in BENCH_ROUNDS (2)
// rounds of each side taking turns, every request with an Idempotency-Key and a reference id of its own and
// 1..10 points. Afterwards the account balance must equal the sum of the 201 answers (the script fails
// otherwise). Targets: ratio >= 0.5, p99 <= 100 ms, no errors, API process RSS <= 300 MB. The API runs
// compiled (it is built first), as in production. Prints one line per figure, the JSON result last.
import { spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { chmod, mkdtemp, rm } from "node:fs/promises"
import { cpus, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { activeUser, balanceOf, metricsOf, newPartnerToken } from "./bench-http-api.js"
import { combined, type LoadResult, runLoad, settleUnanswered, type Target } from "./bench-http-load.js"
import {
  type Child,
  freePort,
  killPostmasterOf,
  postmasterPort,
  startNode,
  stopChild,
  waitUntilServing,
} from "./bench-http-processes.js"
import {
  apiInsideText,
  count,
  cpuText,
  loadText,
  ms,
  report,
  settledText,
  verdict,
  warmUpText,
} from "./bench-http-report.js"
import { cpuMsOf, descendantsCpuMsOf, type MemoryPeak, rssMb, sampleMemory } from "./bench-http-usage.js"
import { integerSetting } from "./bench-setup.js"

const SECONDS = integerSetting("BENCH_SECONDS", 20, 600)
/** Accounts credited; the issue asks for one (every request on one ledger stream), more show what that costs. */
const USERS = integerSetting("BENCH_USERS", 1, 1000)
const WARM_UP_SECONDS = SECONDS >= 10 ? 3 : 1
/** Rounds each side's measured time is split into, the sides taking turns (1: one after the other). */
const ROUNDS = integerSetting("BENCH_ROUNDS", 2, SECONDS)
const ROUND_SECONDS = SECONDS / ROUNDS
/** Extra node arguments for the API process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/profile` to profile it. */
const API_NODE_ARGS = (process.env.BENCH_API_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "")
const CONNECTIONS = 64
const POOL_SIZE = 10
/** The rate limiter is set out of the way, but it still runs its statement on every request, as in production. */
const RATE_LIMIT = "1000000"
const TARGETS = { ratio: 0.5, p99Ms: 100, errors: 0, rssMb: 300 }

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..")

/**
 * The node options of the API's production command (apps/api's `start:dist` script, e.g. its heap limit):
 * the benchmark runs the API as production does.
 */
const productionNodeOptions = (): ReadonlyArray<string> => {
  const manifest = JSON.parse(readFileSync(join(repositoryRoot, "apps/api/package.json"), "utf8")) as {
    readonly scripts?: Readonly<Record<string, string>>
  }
  const command = manifest.scripts?.["start:dist"]
  if (command === undefined) throw new Error("apps/api/package.json has no start:dist script")
  return command.split(/\s+/).filter((part) => part.startsWith("--"))
}
const ADMIN_TOKEN = `bench-admin-${randomUUID()}`

const work = await mkdtemp(join(tmpdir(), "points-bench-http-"))
// The embedded server runs as the `postgres` OS user when we are root: every directory above its data must be
// traversable.
await chmod(work, 0o755)
const dataDir = join(work, "data")
const postgresDataDir = join(dataDir, "postgres")
const children: Array<Child> = []

const environment = (extra: Record<string, string>) => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  // The API runs as `npm start` runs it by default (embedded server, pool of 10, plain HTTP, INFO logs),
  // whatever this shell points at.
  for (const name of [
    "DATABASE_URL",
    "DATABASE_POOL_SIZE",
    "NODE_OPTIONS",
    "TLS_CERT_FILE",
    "TLS_KEY_FILE",
    "LOG_LEVEL",
  ]) {
    delete env[name]
  }
  return { ...env, ...extra }
}

/** What a side's measured rounds used: its server's CPU time, PostgreSQL's, and how its counters grew. */
interface Usage {
  readonly cpuMs: { readonly server: number; readonly postgres: number }
  readonly grown: ReadonlyMap<string, number>
}

/**
 * One measured round of one side: checkpoint (neither side pays for the other's dirty pages), then the load,
 * with the CPU time the server process and the PostgreSQL server (every process of it) used meanwhile and
 * how the server's counters grew (`scrape`, the API's /metrics).
 */
const round = async (
  admin: pg.Client,
  target: Target,
  server: Child,
  postgresParent: Child,
  seconds: number,
  scrape?: () => Promise<ReadonlyMap<string, number>>,
) => {
  await admin.query("CHECKPOINT")
  const metricsBefore = await scrape?.()
  const before = { server: cpuMsOf(server.pid), postgres: descendantsCpuMsOf(postgresParent.pid, "postgres") }
  const measured = await runLoad(target, CONNECTIONS, seconds)
  const cpuMs = {
    server: cpuMsOf(server.pid) - before.server,
    postgres: descendantsCpuMsOf(postgresParent.pid, "postgres") - before.postgres,
  }
  const metricsAfter = (await scrape?.()) ?? new Map<string, number>()
  const grown = new Map(
    [...metricsAfter].map(([sample, value]) => [sample, value - (metricsBefore?.get(sample) ?? 0)] as const),
  )
  return { measured, usage: { cpuMs, grown } satisfies Usage }
}

/** A side's rounds as one run: their answers together, their CPU times and counters summed. */
const together = (rounds: ReadonlyArray<Awaited<ReturnType<typeof round>>>) => {
  const grown = new Map<string, number>()
  for (const { usage } of rounds) {
    for (const [sample, value] of usage.grown) grown.set(sample, (grown.get(sample) ?? 0) + value)
  }
  const sum = (of: (usage: Usage) => number) => rounds.reduce((total, { usage }) => total + of(usage), 0)
  return {
    measured: combined(rounds.map((each) => each.measured)),
    usage: {
      cpuMs: { server: sum((usage) => usage.cpuMs.server), postgres: sum((usage) => usage.cpuMs.postgres) },
      grown,
    } satisfies Usage,
  }
}

/**
 * Compiles the API and the packages it uses to JavaScript (`tsc -b`, incremental: quick when nothing
 * changed), so that it runs as it would in production: no TypeScript compiler in the measured process.
 */
const buildApi = () => {
  const started = Date.now()
  const tsc = join(repositoryRoot, "node_modules/typescript/bin/tsc")
  const built = spawnSync(process.execPath, [tsc, "-b", "apps/api/tsconfig.lib.json"], {
    cwd: repositoryRoot,
    stdio: "inherit",
  })
  if (built.status !== 0) throw new Error(`building the API failed (tsc -b exited with ${built.status})`)
  console.log(
    `build: apps/api and its packages compiled to dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  )
}

const benchmark = async () => {
  buildApi()
  const apiPort = await freePort()
  const nodeOptions = [...productionNodeOptions(), ...API_NODE_ARGS]
  console.log(
    `API command: node ${[...nodeOptions, "apps/api/dist/main.js"].join(" ")} (apps/api start:dist)`,
  )
  const api = startNode("API", [...nodeOptions, "apps/api/dist/main.js"], {
    cwd: repositoryRoot,
    env: environment({
      DATA_DIR: dataDir,
      PORT: String(apiPort),
      HOST: "127.0.0.1",
      ADMIN_TOKEN,
      RATE_LIMIT_PER_SECOND: RATE_LIMIT,
      RATE_LIMIT_BURST: RATE_LIMIT,
    }),
    logFile: join(work, "api.log"),
  })
  children.push(api)
  const apiUrl = `http://127.0.0.1:${apiPort}`
  await waitUntilServing(api, `${apiUrl}/health/ready`, 180)

  const { token } = await newPartnerToken(apiUrl, ADMIN_TOKEN)
  const userIds: Array<string> = []
  for (let n = 0; n < USERS; n++) userIds.push(await activeUser(apiUrl, token, `bench-${n}-${randomUUID()}`))

  // The baseline gets a database of its own on the API's embedded server: same binaries, settings and disk.
  const postgresPort = postmasterPort(postgresDataDir)
  const serverUrl = (database: string) => `postgres://postgres:postgres@127.0.0.1:${postgresPort}/${database}`
  const admin = new pg.Client({ connectionString: serverUrl("postgres"), application_name: "bench-admin" })
  // The server may go away under this idle connection (an interrupted run stops it): that is no crash.
  admin.on("error", () => undefined)
  await admin.connect()
  try {
    const settings = await admin.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings
       WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'shared_buffers', 'max_connections')
       ORDER BY name`,
    )
    console.log(`embedded server: ${settings.rows.map((s) => `${s.name}=${s.setting}`).join(", ")}`)
    console.log(`machine: ${cpus().length} cores, load average ${loadText()} before the runs`)
    await admin.query("CREATE DATABASE bench_baseline")
    const baselinePort = await freePort()
    const baseline = startNode("baseline", ["--import", "tsx", "tools/src/baseline-server.ts"], {
      cwd: repositoryRoot,
      env: environment({
        DATABASE_URL: serverUrl("bench_baseline"),
        DATABASE_POOL_SIZE: String(POOL_SIZE),
        PORT: String(baselinePort),
      }),
      logFile: join(work, "baseline.log"),
    })
    children.push(baseline)
    const baselineUrl = `http://127.0.0.1:${baselinePort}`
    await waitUntilServing(baseline, `${baselineUrl}/health`, 60)

    console.log(
      `load: POST /api/points/add, ${CONNECTIONS} connections (autocannon, no pipelining), ${SECONDS} s per ` +
        `side in ${ROUNDS} round(s) of ${Number(ROUND_SECONDS.toFixed(1))} s, the two sides taking turns, after a ` +
        `${WARM_UP_SECONDS} s warm-up of each; each request a new Idempotency-Key and reference_id, 1..10 ` +
        `points, on ${USERS} account(s)`,
    )
    console.log(
      `API: node, its own embedded PostgreSQL, pool of ${POOL_SIZE}; rate limit set to ${RATE_LIMIT}/s so it ` +
        "never refuses, but its statement still runs on every request, as in production",
    )
    console.log(`API process RSS at rest: ${rssMb(api.pid).toFixed(0)} MB`)

    const apiTarget: Target = { baseUrl: apiUrl, path: "/api/points/add", token, userIds }
    const baselineTarget: Target = { baseUrl: baselineUrl, path: "/api/points/add", token, userIds }
    const apiMemory = sampleMemory(api.pid)
    const baselineMemory = sampleMemory(baseline.pid, false)
    const apiRounds: Array<Awaited<ReturnType<typeof round>>> = []
    const baselineRounds: Array<Awaited<ReturnType<typeof round>>> = []
    let apiWarmUp: LoadResult
    let baselineWarmUp: LoadResult
    let apiPeak: MemoryPeak
    let baselinePeak: MemoryPeak
    try {
      await admin.query("CHECKPOINT")
      apiWarmUp = await runLoad(apiTarget, CONNECTIONS, WARM_UP_SECONDS)
      await admin.query("CHECKPOINT")
      baselineWarmUp = await runLoad(baselineTarget, CONNECTIONS, WARM_UP_SECONDS)
      // The sides take turns, so that the machine's drift (its speed moves by a third within minutes here)
      // weighs on both alike.
      for (let n = 0; n < ROUNDS; n++) {
        apiRounds.push(await round(admin, apiTarget, api, api, ROUND_SECONDS, () => metricsOf(apiUrl)))
        baselineRounds.push(await round(admin, baselineTarget, baseline, api, ROUND_SECONDS))
      }
    } finally {
      apiPeak = apiMemory.stop()
      baselinePeak = baselineMemory.stop()
    }
    const apiRun = together(apiRounds)
    const baselineRun = together(baselineRounds)
    console.log(warmUpText("API", WARM_UP_SECONDS, apiWarmUp))
    const apiFigures = report("API", apiRun.measured)
    console.log(cpuText("API", apiRun.measured, apiRun.usage.cpuMs))
    console.log(apiInsideText(apiRun.usage.grown))
    console.log(
      `API: peak RSS of the node process ${apiPeak.rssMb.toFixed(0)} MB; its embedded PostgreSQL processes ` +
        `${apiPeak.postgresPssMb.toFixed(0)} MB together (peak PSS: shared buffers counted once)`,
    )

    // Every request that may have moved a balance is accounted for: the ones cut off by the end of a run are
    // sent again with their key, which answers what they did (or does it now).
    for (const [label, run] of [
      ["API warm-up", apiWarmUp],
      ["API", apiRun.measured],
    ] as const) {
      if (run.unanswered.size > 0) console.log(settledText(label, await settleUnanswered(apiTarget, run)))
    }
    let balancesHold = true
    for (const userId of userIds) {
      const balance = await balanceOf(apiUrl, token, userId)
      const credited = (apiWarmUp.credited.get(userId) ?? 0) + (apiRun.measured.credited.get(userId) ?? 0)
      const holds = balance === credited
      balancesHold &&= holds
      console.log(
        `balance check: account of ${userId} holds ${count(balance)} points, the 201 answers credited ` +
          `${count(credited)}: ${holds ? "OK" : "MISMATCH"}`,
      )
    }

    console.log(warmUpText("baseline", WARM_UP_SECONDS, baselineWarmUp))
    const baselineFigures = report("baseline", baselineRun.measured)
    console.log(cpuText("baseline", baselineRun.measured, baselineRun.usage.cpuMs))
    console.log(`baseline: peak RSS of the node process ${baselinePeak.rssMb.toFixed(0)} MB`)

    console.log(`machine: load average ${loadText()} after the runs`)
    const ratio = Math.round((apiFigures.rate / baselineFigures.rate) * 1000) / 1000
    const rss = Math.round(apiPeak.rssMb)
    console.log(
      `targets: ratio ${ratio} >= ${TARGETS.ratio} ${verdict(ratio >= TARGETS.ratio)}; p99 ${ms(apiFigures.p99)} ` +
        `ms <= ${TARGETS.p99Ms} ms ${verdict(apiFigures.p99 <= TARGETS.p99Ms)}; errors ${apiFigures.errors} ` +
        `${verdict(apiFigures.errors === TARGETS.errors)}; API RSS ${rss} MB <= ${TARGETS.rssMb} MB ` +
        `${verdict(rss <= TARGETS.rssMb)}`,
    )
    console.log(
      JSON.stringify({
        name: "http",
        req_per_s: Math.round(apiFigures.rate),
        p50_ms: Math.round(apiFigures.p50 * 100) / 100,
        p99_ms: Math.round(apiFigures.p99 * 100) / 100,
        baseline_req_per_s: Math.round(baselineFigures.rate),
        ratio,
        errors: apiFigures.errors,
        rss_mb: rss,
      }),
    )
    if (!balancesHold) throw new Error("an account balance differs from the sum of the 201 answers")
  } finally {
    await admin.end().catch(() => undefined)
  }
}

/** Stops every child (the API stops its database; a database it left behind is killed) and removes the data. */
const cleanUp = async () => {
  for (const child of children.reverse()) await stopChild(child)
  await killPostmasterOf(postgresDataDir).catch(() => undefined)
  await rm(work, { recursive: true, force: true }).catch(() => undefined)
}

let stopping = false
const interrupted = (signal: string) => {
  if (stopping) return
  stopping = true
  console.error(`${signal}: stopping the API and the baseline`)
  void cleanUp().finally(() => process.exit(130))
}
process.once("SIGINT", () => interrupted("SIGINT"))
process.once("SIGTERM", () => interrupted("SIGTERM"))

let exitCode = 0
try {
  await benchmark()
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  exitCode = 1
} finally {
  stopping = true
  await cleanUp()
}
process.exit(exitCode)

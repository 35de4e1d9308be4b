import { type ChildProcess, spawn } from "node:child_process"
import { type AddressInfo, createServer as createNetServer } from "node:net"
import { tmpdir } from "node:os"
import { fileURLToPath } from "node:url"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { ADMIN_TOKEN, eventually } from "./harness.js"

const apiDirectory = fileURLToPath(new URL("..", import.meta.url))
const repositoryRoot = fileURLToPath(new URL("../../..", import.meta.url))

/** A TCP port free at the time of asking, on 127.0.0.1. */
export const freePort = Effect.promise(
  () =>
    new Promise<number>((resolve, reject) => {
      const probe = createNetServer()
      probe.once("error", reject)
      probe.listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo
        probe.close(() => resolve(port))
      })
    }),
)

export interface ApiProcess {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exit: Promise<number | string | null>
}

/** An app's entry (`src/main.ts`: the API; `src/platform.ts`: `npm start`) as a child process; killed (SIGKILL) when the scope closes if still running. */
export const apiProcess = (env: Record<string, string>, entry = "src/main.ts") =>
  childProcess(process.execPath, ["--conditions=@points/source", "--import", "tsx", entry], apiDirectory, env)

/** `npm start` as the Quick start runs it, from the repository's root (see apiProcess). */
export const npmStartProcess = (env: Record<string, string>) =>
  childProcess("npm", ["start"], repositoryRoot, env)

const childProcess = (
  command: string,
  args: ReadonlyArray<string>,
  cwd: string,
  env: Record<string, string>,
) =>
  Effect.acquireRelease(
    Effect.sync((): ApiProcess => {
      const child = spawn(command, args, {
        cwd,
        // Only what it needs: nothing of the test runner's environment leaks into it.
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? tmpdir(), ...env },
        stdio: ["ignore", "pipe", "pipe"],
      })
      let stdout = ""
      let stderr = ""
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk
      })
      child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk
      })
      const exit = new Promise<number | string | null>((resolve) =>
        child.once("exit", (code, signal) => resolve(code ?? signal)),
      )
      return { child, stdout: () => stdout, stderr: () => stderr, exit }
    }),
    ({ child }) =>
      Effect.sync(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      }),
  )

/** Waits (at most `seconds`) for the process to print `text`; fails with its output if it exits first. */
export const waitForOutput = (api: ApiProcess, text: string, seconds: number) =>
  eventually(
    Effect.sync(() => ({ found: api.stdout().includes(text), gone: api.child.exitCode !== null })),
    (state) => state.found || state.gone,
    seconds,
  ).pipe(
    Effect.flatMap((state) =>
      state.found ? Effect.void : Effect.dieMessage(`the API exited: ${api.stdout()}\n${api.stderr()}`),
    ),
  )

/** The URL of the test file's fresh database, to hand to a child process. */
export const testDatabaseUrl = Effect.map(PgClient.PgClient, (client) => {
  const url = client.config.url
  if (url === undefined) throw new Error("the test database has no URL")
  return Redacted.value(url)
})

/** An app's entry as a child process (see apiProcess), once it says it listens on `base`. */
export const listeningProcess = (env: Record<string, string>, base: string, entry?: string) =>
  Effect.tap(apiProcess(env, entry), (api) => waitForOutput(api, `listening on ${base}`, 60))

/** SIGKILLs a child process and waits until it is gone. */
export const killProcess = (api: ApiProcess) =>
  Effect.promise(() => {
    api.child.kill("SIGKILL")
    return api.exit
  })

/**
 * Where an app process will listen (a free port on 127.0.0.1, as `base`) and its environment: the test
 * database, that port, the admin token, and `extra`.
 */
export const processSettings = (extra: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const port = yield* freePort
    const env: Record<string, string> = {
      DATABASE_URL: yield* testDatabaseUrl,
      HOST: "127.0.0.1",
      PORT: String(port),
      ADMIN_TOKEN,
      ...extra,
    }
    return { base: `http://127.0.0.1:${port}`, env }
  })

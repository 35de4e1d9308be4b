// The processes of the HTTP benchmark: started in process groups of their own, so that stopping one also
// stops what it started (the API's embedded PostgreSQL), with their output kept in a log file to show when
// they fail.
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, openSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { processAlive } from "@points/infrastructure"

/** A child process of the benchmark, and where its output goes. */
export interface Child {
  readonly name: string
  readonly process: ChildProcess
  readonly pid: number
  readonly logFile: string
  /** Settles when the process has exited, with its exit code (or the signal that ended it). */
  readonly exited: Promise<string>
}

/** Starts `node <args>` from `cwd` in a process group of its own, its output appended to `logFile`. */
export const startNode = (
  name: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly logFile: string },
): Child => {
  const log = openSync(options.logFile, "a")
  const child = spawn(process.execPath, [...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", log, log],
    detached: true,
  })
  // The child holds its own copy of the descriptor.
  closeSync(log)
  if (child.pid === undefined) throw new Error(`${name} did not start`)
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ?? `exit code ${code}`))
  })
  return { name, process: child, pid: child.pid, logFile: options.logFile, exited }
}

const alive = processAlive

/**
 * Stops a child: SIGTERM (the API then stops its embedded database itself), and after `graceMs` SIGKILL to
 * its whole process group. Never throws: it runs in `finally` blocks.
 */
export const stopChild = async (child: Child, graceMs = 15_000) => {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return
  try {
    process.kill(child.pid, "SIGTERM")
  } catch {
    return
  }
  const stopped = await Promise.race([child.exited.then(() => true), sleep(graceMs).then(() => false)])
  if (!stopped) {
    try {
      process.kill(-child.pid, "SIGKILL")
    } catch {
      // Already gone.
    }
    await Promise.race([child.exited, sleep(2_000)])
  }
}

/**
 * Kills the postmaster of the data directory if it still runs (the API was killed before it could stop it),
 * so that no database outlives the benchmark.
 */
export const killPostmasterOf = async (postgresDataDir: string) => {
  const pid = postmasterPid(postgresDataDir)
  if (pid === null || !alive(pid)) return
  process.kill(pid, "SIGQUIT")
  for (let waited = 0; waited < 5_000 && alive(pid); waited += 100) await sleep(100)
  if (alive(pid)) process.kill(pid, "SIGKILL")
}

const postmasterLines = (postgresDataDir: string) => {
  try {
    return readFileSync(`${postgresDataDir}/postmaster.pid`, "utf8").split("\n")
  } catch {
    return null
  }
}

const postmasterPid = (postgresDataDir: string) => {
  const pid = Number(postmasterLines(postgresDataDir)?.[0])
  return Number.isInteger(pid) && pid > 0 ? pid : null
}

/** The port of the PostgreSQL server running on `postgresDataDir` (line 4 of its postmaster.pid). */
export const postmasterPort = (postgresDataDir: string) => {
  const port = Number(postmasterLines(postgresDataDir)?.[3])
  if (!(Number.isInteger(port) && port > 0)) throw new Error(`no running server on ${postgresDataDir}`)
  return port
}

/** A port of 127.0.0.1 that is free right now. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/**
 * Polls `url` until it answers 200, failing when `child` exits first or after `seconds`; shows the end of the
 * child's log in the error, since that is where a failed start explains itself.
 */
export const waitUntilServing = async (child: Child, url: string, seconds: number) => {
  const deadline = Date.now() + seconds * 1000
  let exited: string | null = null
  void child.exited.then((how) => {
    exited = how
  })
  for (;;) {
    if (exited !== null) throw new Error(`${child.name} exited (${exited}) before serving\n${tailOf(child)}`)
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
      await response.arrayBuffer()
      if (response.status === 200) return
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline)
      throw new Error(`${child.name} not serving ${url} after ${seconds} s\n${tailOf(child)}`)
    await sleep(100)
  }
}

/** The last lines of a child's log. */
export const tailOf = (child: Child, lines = 30) => {
  try {
    return readFileSync(child.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n")
  } catch {
    return "(no log)"
  }
}

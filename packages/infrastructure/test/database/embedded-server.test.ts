import { spawn, spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs"
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Option, Redacted, Schedule, Scope } from "effect"
import pg from "pg"
import { freePort } from "../../src/database/embedded-server.js"
import { PostgresLogTail } from "../../src/database/postgres-log.js"
import { processIdentity } from "../../src/database/postgres-owner.js"
import { EmbeddedServerError, StartFailure, startEmbeddedServer, startProblemOf } from "../../src/index.js"
import { processAlive } from "../../src/runtime/process-alive.js"
import { testDatabase } from "../../src/testing/index.js"
import { readyProcess } from "../ready-process.js"

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
  it("says in one line what the embedded server could not do, and on which DATA_DIR", () => {
    const cause = Cause.fail(
      new EmbeddedServerError({ step: "start", dataDir: "/srv/points", cause: new Error("port 5432 taken") }),
    )
    expect(startProblemOf(cause)).toBe(
      "the embedded PostgreSQL could not start on DATA_DIR (/srv/points): port 5432 taken",
    )
  })
})

// A temporary directory for one test's DATA_DIR, removed with the scope.
const temporaryDirectory = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "points-embedded-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
)

// The one line an operator would read: the start must fail (not die) with a problem startProblemOf names.
const startProblem = (dataDir: string) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(Effect.scoped(startEmbeddedServer(dataDir)))
    expect(Exit.isFailure(exit)).toBe(true)
    return Exit.isFailure(exit) ? startProblemOf(exit.cause) : undefined
  })

describe("The embedded server on a DATA_DIR it cannot use", () => {
  it.scoped("names DATA_DIR and the reason when it is a file", () =>
    Effect.gen(function* () {
      const file = join(yield* temporaryDirectory, "not-a-directory")
      yield* Effect.promise(() => writeFile(file, "x"))
      expect(yield* startProblem(file)).toBe(
        `DATA_DIR (${file}) cannot be used: EEXIST: file already exists, mkdir '${file}'`,
      )
    }),
  )

  it.scoped(
    "names DATA_DIR and what PostgreSQL says of data that is not of its version",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        // A real data directory: initialised, started and stopped once.
        yield* Effect.scoped(startEmbeddedServer(dataDir))
        const version = join(dataDir, "postgres", "PG_VERSION")
        yield* Effect.promise(() => writeFile(version, "garbage\n"))
        expect(yield* startProblem(dataDir)).toBe(
          `the embedded PostgreSQL could not start on DATA_DIR (${dataDir}): "${join(dataDir, "postgres")}" is not a valid data directory: File "${version}" does not contain valid data.`,
        )
        yield* Effect.promise(() => writeFile(version, "15\n"))
        expect(yield* startProblem(dataDir)).toMatch(
          new RegExp(
            `^the embedded PostgreSQL could not start on DATA_DIR \\(${dataDir}\\): database files are incompatible with server: The data directory was initialized by PostgreSQL version 15, which is not compatible with this version \\d+`,
          ),
        )
      }),
    120_000,
  )
})

// A port this process listens on: taken, as when another process bound a picked port before the server did.
const takenPort = Effect.acquireRelease(
  Effect.async<ReturnType<typeof createServer>>((resume) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void))),
).pipe(
  Effect.map((server) => {
    const address = server.address()
    return typeof address === "object" && address !== null ? address.port : 0
  }),
)

describe("The embedded server's port", () => {
  it.scoped(
    "starts on another free port when the one picked was taken before the server bound it",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        const taken = yield* takenPort
        const picked: Array<number> = []
        const pickPort = Effect.suspend(() => (picked.length === 0 ? Effect.succeed(taken) : freePort)).pipe(
          Effect.tap((port) => picked.push(port)),
        )
        const server = yield* startEmbeddedServer(dataDir, pickPort)
        expect(picked[0]).toBe(taken)
        expect(picked).toHaveLength(2)
        expect(server.port).toBe(picked[1])
        const answer = yield* Effect.acquireUseRelease(
          Effect.promise(async () => {
            const client = new pg.Client({ connectionString: Redacted.value(server.adminUrl) })
            await client.connect()
            return client
          }),
          (client) => Effect.promise(() => client.query<{ port: string }>("SHOW port")),
          (client) => Effect.promise(() => client.end()),
        )
        expect(answer.rows[0]?.port).toBe(String(server.port))
      }),
    120_000,
  )

  it.scoped(
    "gives up after three taken ports, saying why",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        const taken = yield* takenPort
        let picks = 0
        const pickPort = Effect.sync(() => {
          picks++
          return taken
        })
        const exit = yield* Effect.exit(Effect.scoped(startEmbeddedServer(dataDir, pickPort)))
        expect(Exit.isFailure(exit) && startProblemOf(exit.cause)).toBe(
          `the embedded PostgreSQL could not start on DATA_DIR (${dataDir}): could not create any TCP/IP sockets`,
        )
        expect(picks).toBe(3)
      }),
    120_000,
  )
})

describe("PostgresLogTail", () => {
  it("reads the first FATAL with its details, else the last line, else says nothing came", () => {
    const tail = new PostgresLogTail()
    expect(tail.reason()).toBe("PostgreSQL exited without saying why")
    tail.add('postgres: could not access the server configuration file "/d/postgresql.conf": No such file\n')
    expect(tail.reason()).toBe(
      'postgres: could not access the server configuration file "/d/postgresql.conf": No such file',
    )
    tail.add(
      "2026-11-22 11:19:16.520 UTC [20442] LOG:  starting PostgreSQL 18.4\n" +
        "2026-11-22 11:19:16.520 UTC [20442] FATAL:  data directory has wrong ownership\n" +
        "2026-11-22 11:19:16.520 UTC [20442] HINT:  The server must be started by the user that owns it.\n",
    )
    expect(tail.reason()).toBe("data directory has wrong ownership")
  })
})

// The processes whose parent is `pid` (Linux: /proc/<n>/stat, the parent after the command's parentheses).
const childrenOf = (pid: number) =>
  readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid
      } catch {
        return false
      }
    })
    .map(Number)

// The embedded server started on `dataDir` in a scope of its own, then crashed: its postmaster killed
// (SIGKILL) and waited for, with its children (checkpointer, writers), which hold its shared memory until they
// notice it is gone; a new server on the data refuses to start until they have exited, however long that
// takes under load. Returns the scope, and the dead server's command as an operator would run it again.
const crashedServer = (dataDir: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    yield* Scope.extend(startEmbeddedServer(dataDir), scope)
    const pid = Number(readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0])
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const command = {
      binary: readlinkSync(`/proc/${pid}/exe`),
      args: readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).slice(1),
      uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
      gid: Number(/^Gid:\s+(\d+)/m.exec(status)?.[1]),
    }
    const family = [pid, ...childrenOf(pid)]
    process.kill(pid, "SIGKILL")
    yield* Effect.sync(() => family.some(processAlive)).pipe(
      Effect.repeat({ while: (alive) => alive, schedule: Schedule.spaced("20 millis") }),
    )
    return { scope, command }
  })

describe("The embedded server's stop", () => {
  it.scopedLive(
    "ends at once when its server crashed, instead of waiting for the process that is gone",
    () =>
      Effect.gen(function* () {
        const { scope } = yield* crashedServer(yield* temporaryDirectory)
        // The library's own stop waited for the exit of the process it started, which had already exited.
        yield* Scope.close(scope, Exit.void).pipe(
          Effect.timeoutFail({
            duration: "5 seconds",
            onTimeout: () => new Error("the stop waited for a server that is gone"),
          }),
        )
      }),
    30_000,
  )

  it.scopedLive(
    "stops the server started again by hand on its data after a crash, and waits for it",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        const { scope, command } = yield* crashedServer(dataDir)
        const { binary, args, uid, gid } = command
        const again = spawn(binary, args, { uid, gid, stdio: "ignore" })
        const exited = Effect.async<void>((resume) => {
          if (again.exitCode !== null || again.signalCode !== null) return resume(Effect.void)
          again.once("exit", () => resume(Effect.void))
        })
        // Ready once its postmaster.pid names it and says so.
        const pidFile = join(dataDir, "postgres", "postmaster.pid")
        yield* Effect.sync(() => {
          const lines = existsSync(pidFile) ? readFileSync(pidFile, "utf8").split("\n") : []
          return Number(lines[0]) === again.pid && lines.some((line) => line.trim() === "ready")
        }).pipe(
          Effect.repeat({ until: (ready) => ready, schedule: Schedule.spaced("20 millis") }),
          Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("not started again") }),
        )
        yield* Scope.close(scope, Exit.void)
        // Stopped by the scope's close, not left running on the data directory.
        yield* exited.pipe(
          Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("still running") }),
        )
        expect(again.signalCode ?? again.exitCode).toBe(0)
      }),
    60_000,
  )
})

describe("A new data directory", () => {
  it.scoped("is made anew after a process killed during initdb, whose partial directory is removed", () =>
    Effect.gen(function* () {
      const dataDir = yield* temporaryDirectory
      // What a process killed during initdb leaves: its staging directory, partly written.
      const gone = spawnSync(process.execPath, ["-e", ""]).pid
      const abandoned = join(dataDir, `postgres.initialising-${gone}-1`)
      yield* Effect.promise(async () => {
        await mkdir(join(abandoned, "global"), { recursive: true })
        await writeFile(join(abandoned, "PG_VERSION"), "18\n")
      })
      // A live process's staging directory (an initdb under way) is left alone.
      const initialising = yield* Effect.acquireRelease(
        Effect.sync(() => spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"])),
        (child) => Effect.sync(() => child.kill("SIGKILL")),
      )
      const underWay = join(
        dataDir,
        `postgres.initialising-${initialising.pid}-${processIdentity(initialising.pid ?? 0)}`,
      )
      yield* Effect.promise(() => mkdir(underWay))
      const server = yield* startEmbeddedServer(dataDir)
      expect(existsSync(abandoned)).toBe(false)
      expect(existsSync(underWay)).toBe(true)
      expect(existsSync(join(dataDir, "postgres", "PG_VERSION"))).toBe(true)
      expect(readdirSync(dataDir).filter((entry) => entry.startsWith("postgres.initialising-"))).toEqual([
        underWay.slice(dataDir.length + 1),
      ])
      expect(yield* selectOne(server.adminUrl)).toEqual({ one: 1 })
    }),
  )

  it.scopedLive(
    "is made on the next start after its process and its initdb were killed midway (SIGKILL to the group)",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        // The library writes initdb's password file to the temporary directory and a killed process never
        // removes it: the starter gets one of its own, removed with the test (open to initdb's OS user).
        const privateTemporary = yield* temporaryDirectory
        yield* Effect.promise(() => chmod(privateTemporary, 0o755))
        // Its own process group, so that the kill reaches initdb too, as a container's end would.
        const starter = yield* Effect.acquireRelease(
          Effect.sync(() =>
            spawn(
              process.execPath,
              ["--conditions=@points/source", "--import", "tsx", "test/database/embedded-server-process.ts"],
              {
                cwd: packageDirectory,
                env: { ...process.env, DATA_DIR: dataDir, TMPDIR: privateTemporary },
                detached: true,
                stdio: "ignore",
              },
            ),
          ),
          (child) => Effect.sync(() => killGroup(child.pid ?? 0)),
        )
        // initdb writes PG_VERSION first: from then on its data directory is partial until it ends.
        const initdbUnderWay = () =>
          readdirSync(dataDir).some((entry) => existsSync(join(dataDir, entry, "PG_VERSION")))
        yield* Effect.sync(initdbUnderWay).pipe(
          Effect.repeat({ until: (found) => found, schedule: Schedule.spaced("10 millis") }),
          Effect.timeoutFail({ duration: "60 seconds", onTimeout: () => new Error("no initdb seen") }),
        )
        killGroup(starter.pid ?? 0)
        yield* Effect.sync(() => processAlive(starter.pid ?? 0)).pipe(
          Effect.repeat({ while: (alive) => alive, schedule: Schedule.spaced("20 millis") }),
        )
        const server = yield* startEmbeddedServer(dataDir)
        expect(yield* selectOne(server.adminUrl)).toEqual({ one: 1 })
        expect(readdirSync(dataDir).filter((entry) => entry.startsWith("postgres.initialising-"))).toEqual([])
      }),
    120_000,
  )

  it.scoped(
    "is never made over a postgres entry that holds anything else (or is a file), which is named and kept",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        yield* Effect.promise(async () => {
          await mkdir(join(dataDir, "postgres"))
          await writeFile(join(dataDir, "postgres", "notes.txt"), "mine")
        })
        expect(yield* startProblem(dataDir)).toBe(notData(dataDir))
        expect(readdirSync(join(dataDir, "postgres"))).toEqual(["notes.txt"])
        expect(readdirSync(dataDir)).toEqual(["postgres"])
        // A file in its place: the same one line, not a failure of the code.
        const other = yield* temporaryDirectory
        yield* Effect.promise(() => writeFile(join(other, "postgres"), "mine"))
        expect(yield* startProblem(other)).toBe(notData(other))
      }),
  )

  it.scoped(
    "tells the start that lost the race on a new DATA_DIR that the data is in use, and keeps the winner's",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        // Both starts make the data (each its initdb, one rename wins) and only then start their servers, at
        // once: as two processes started together on a new DATA_DIR may.
        const bothMade = yield* Deferred.make<void>()
        let made = 0
        const pickPort = Effect.suspend(() => {
          made++
          return made === 2 ? Deferred.succeed(bothMade, undefined) : Effect.void
        }).pipe(Effect.zipRight(Deferred.await(bothMade)), Effect.zipRight(freePort))
        const exits = yield* Effect.all(
          [
            Effect.exit(startEmbeddedServer(dataDir, pickPort)),
            Effect.exit(startEmbeddedServer(dataDir, pickPort)),
          ],
          { concurrency: 2 },
        )
        const started = exits.filter(Exit.isSuccess)
        const refused = exits.filter(Exit.isFailure)
        expect(started).toHaveLength(1)
        expect(refused).toHaveLength(1)
        const running = postmasterPidOf(dataDir)
        expect(refused[0] && startProblemOf(refused[0].cause)).toContain(`is in use by process ${running}`)
        const [winner] = started
        if (winner === undefined) return
        expect(yield* selectOne(winner.value.adminUrl)).toEqual({ one: 1 })
        expect(readdirSync(dataDir).filter((entry) => entry.startsWith("postgres.initialising-"))).toEqual([])
      }),
    120_000,
  )
})

const packageDirectory = fileURLToPath(new URL("../..", import.meta.url))

// SIGKILL to a process group (a process started detached, and every process it started), if still there.
const killGroup = (pid: number) => {
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // Gone already.
  }
}

const notData = (dataDir: string) =>
  `DATA_DIR (${dataDir}) holds a postgres entry that is not a PostgreSQL data directory (no PG_VERSION in it): move it away, or set DATA_DIR to another directory`

// The one row of `SELECT 1` on a server, through a client of its own.
const selectOne = (url: Redacted.Redacted) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: Redacted.value(url) })
    await client.connect()
    try {
      return (await client.query("SELECT 1 AS one")).rows[0]
    } finally {
      await client.end()
    }
  })

// SIGKILL to a process alone, as the kernel's out-of-memory killer sends it, waited for until it is gone.
const killAndWait = (pid: number) =>
  Effect.sync(() => process.kill(pid, "SIGKILL")).pipe(
    Effect.zipRight(
      Effect.sync(() => processAlive(pid)).pipe(
        Effect.repeat({ while: (alive) => alive, schedule: Schedule.spaced("20 millis") }),
      ),
    ),
  )

// An owner record as a process leaves it just before its server starts (no postmaster yet).
const writeOwnerRecord = (
  dataDir: string,
  owner: { readonly pid: number; readonly identity: string | null },
) =>
  Effect.promise(() =>
    writeFile(
      join(dataDir, "postgres.owner"),
      JSON.stringify({ ...owner, postmaster: null, postmasterIdentity: null }),
    ),
  )

// Starts the embedded server on `dataDir` in a process of its own, and waits until it says it runs; the
// process and its server are stopped when the test's scope closes, however the test ended.
const serverProcess = (dataDir: string) =>
  Effect.acquireRelease(
    readyProcess("test/database/embedded-server-process.ts", { DATA_DIR: dataDir }),
    (child) =>
      Effect.sync(() => {
        const postmaster = postmasterPidOf(dataDir)
        child.kill("SIGKILL")
        if (postmaster > 1 && processAlive(postmaster)) process.kill(postmaster, "SIGQUIT")
      }),
  )

const postmasterPidOf = (dataDir: string) => {
  try {
    return Number(readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0])
  } catch {
    return 0
  }
}

describe("A start after a process of the platform was killed", () => {
  it.scopedLive(
    "stops the server the killed process left running and starts on its data, as a supervisor's restart needs",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        const owner = yield* serverProcess(dataDir)
        const left = postmasterPidOf(dataDir)
        // Killed alone: its server lives on.
        yield* killAndWait(owner.pid ?? 0)
        expect(processAlive(left)).toBe(true)
        const server = yield* startEmbeddedServer(dataDir)
        expect(processAlive(left)).toBe(false)
        expect(postmasterPidOf(dataDir)).not.toBe(left)
        expect(yield* selectOne(server.adminUrl)).toEqual({ one: 1 })
      }),
    120_000,
  )

  it.scoped("still refuses the data of a server whose starting process lives, or of none on record", () =>
    Effect.gen(function* () {
      const dataDir = yield* temporaryDirectory
      const scope = yield* Scope.make()
      yield* Scope.extend(startEmbeddedServer(dataDir), scope)
      const running = postmasterPidOf(dataDir)
      // This process started it and lives: another start is refused, and the server is left alone.
      const again = yield* Effect.exit(Effect.scoped(startEmbeddedServer(dataDir)))
      expect(Exit.isFailure(again) && startProblemOf(again.cause)).toContain(
        `is in use by process ${running}`,
      )
      // A server no process of the platform recorded (started by hand, or by an older version) is not stopped.
      yield* Effect.promise(() => rm(join(dataDir, "postgres.owner")))
      const unrecorded = yield* Effect.exit(Effect.scoped(startEmbeddedServer(dataDir)))
      expect(Exit.isFailure(unrecorded) && startProblemOf(unrecorded.cause)).toContain(
        `is in use by process ${running}`,
      )
      expect(processAlive(running)).toBe(true)
      yield* Scope.close(scope, Exit.void)
    }),
  )

  it.scoped(
    "refuses, and never stops, a live server of another data directory that a stale record names",
    () =>
      Effect.gen(function* () {
        // What a crash of the whole machine leaves: a pid file and an owner record whose process ids, reused
        // since, now name a live PostgreSQL of another DATA_DIR (here, one this test runs).
        const other = yield* temporaryDirectory
        yield* startEmbeddedServer(other)
        const running = postmasterPidOf(other)
        const dataDir = yield* temporaryDirectory
        const gone = spawnSync(process.execPath, ["-e", ""]).pid
        yield* Effect.promise(async () => {
          await mkdir(join(dataDir, "postgres"))
          await writeFile(join(dataDir, "postgres", "postmaster.pid"), `${running}\n${dataDir}\n`)
          await writeFile(
            join(dataDir, "postgres.owner"),
            JSON.stringify({
              pid: gone,
              identity: null,
              postmaster: running,
              postmasterIdentity: processIdentity(running),
            }),
          )
        })
        const exit = yield* Effect.exit(Effect.scoped(startEmbeddedServer(dataDir)))
        expect(Exit.isFailure(exit) && startProblemOf(exit.cause)).toContain(
          `is in use by process ${running}`,
        )
        expect(processAlive(running)).toBe(true)
      }),
  )

  it.scopedLive(
    "stops the server of a process killed while it started, as its record says, and starts on its data",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        const owner = yield* serverProcess(dataDir)
        const ownerPid = owner.pid ?? 0
        const left = postmasterPidOf(dataDir)
        const ownerIdentity = processIdentity(ownerPid)
        yield* killAndWait(ownerPid)
        // What a kill before the server was up leaves: the record written before the start, naming no server.
        yield* writeOwnerRecord(dataDir, { pid: ownerPid, identity: ownerIdentity })
        const server = yield* startEmbeddedServer(dataDir)
        expect(processAlive(left)).toBe(false)
        expect(yield* selectOne(server.adminUrl)).toEqual({ one: 1 })
      }),
    120_000,
  )

  it.scoped(
    "refuses a server that a record of a start names unless it carries that process's mark and that process is gone",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* temporaryDirectory
        const scope = yield* Scope.make()
        yield* Scope.extend(startEmbeddedServer(dataDir), scope)
        const running = postmasterPidOf(dataDir)
        const refused = Effect.gen(function* () {
          const exit = yield* Effect.exit(Effect.scoped(startEmbeddedServer(dataDir)))
          expect(Exit.isFailure(exit) && startProblemOf(exit.cause)).toContain(
            `is in use by process ${running}`,
          )
        })
        // A gone process whose start lost a race to this server's (or a stale record): not its starter.
        const gone = spawnSync(process.execPath, ["-e", ""]).pid
        yield* writeOwnerRecord(dataDir, { pid: gone, identity: processIdentity(process.pid) })
        yield* refused
        // Its starter's start record, while the starter (this process) lives: a start under way, not an orphan.
        yield* writeOwnerRecord(dataDir, { pid: process.pid, identity: processIdentity(process.pid) })
        yield* refused
        expect(processAlive(running)).toBe(true)
        yield* Scope.close(scope, Exit.void)
      }),
  )

  it.scoped("is on record as this process's before its server starts, and with its server once it runs", () =>
    Effect.gen(function* () {
      const dataDir = yield* temporaryDirectory
      const ownerRecord = () => JSON.parse(readFileSync(join(dataDir, "postgres.owner"), "utf8"))
      let beforeStart: unknown
      const pickPort = Effect.zipLeft(
        freePort,
        Effect.sync(() => {
          beforeStart = ownerRecord()
        }),
      )
      yield* startEmbeddedServer(dataDir, pickPort)
      expect(beforeStart).toEqual({
        pid: process.pid,
        identity: processIdentity(process.pid),
        postmaster: null,
        postmasterIdentity: null,
      })
      const running = postmasterPidOf(dataDir)
      expect(ownerRecord()).toMatchObject({ pid: process.pid, postmaster: running })
      // The server carries the mark that ties it to this process.
      const commandLine = readFileSync(`/proc/${running}/cmdline`, "utf8").split("\0")
      expect(commandLine).toContain(`points.owner=${process.pid}-${processIdentity(process.pid)}`)
    }),
  )

  it.scopedLive("tells no end of its server when its own scope stops it", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const server = yield* Scope.extend(startEmbeddedServer(yield* temporaryDirectory), scope)
      yield* Scope.close(scope, Exit.void)
      expect(yield* Effect.option(Effect.timeout(server.ended, "500 millis"))).toEqual(Option.none())
    }),
  )
})

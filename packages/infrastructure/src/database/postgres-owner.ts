import { readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { processAlive } from "../runtime/process-alive.js"

// Which process of the platform started the embedded server running on a data directory, so that a start
// after that process was killed alone (SIGKILL: no stop ran, its server lives on) can tell the server for its
// orphan and stop it. Kept in DATA_DIR/postgres.owner while the server runs.

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

/** The starting process and the postmaster it started, each with its identity (see processIdentity). */
interface Owner {
  readonly pid: number
  readonly identity: string | null
  readonly postmaster: number
  readonly postmasterIdentity: string | null
}

const ownerFile = (root: string) => join(root, "postgres.owner")

const ownerOf = (root: string): Owner | undefined => {
  try {
    const owner = JSON.parse(readFileSync(ownerFile(root), "utf8")) as Owner
    return Number.isInteger(owner.pid) && Number.isInteger(owner.postmaster) ? owner : undefined
  } catch {
    return undefined
  }
}

/**
 * Records this process as the starter of `postmaster`, serving the data under `databaseDir`. Unrecorded (the
 * file could not be written), a start after this process is killed refuses the server as in use instead.
 */
export const recordOwner = (root: string, postmaster: number) => {
  const owner: Owner = {
    pid: process.pid,
    identity: processIdentity(process.pid),
    postmaster,
    postmasterIdentity: processIdentity(postmaster),
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
 * Whether the live `postmaster` on `databaseDir` is the orphan of a killed process of the platform: the very
 * server its record names (same process, same start time, running in this data directory), whose starter is
 * gone. Any doubt (no record, another server since, a process id reused, /proc unreadable) says no: a server
 * that is not ours is refused as in use, never stopped.
 */
export const orphaned = (root: string, databaseDir: string, postmaster: number): boolean => {
  const owner = ownerOf(root)
  if (owner === undefined || owner.postmaster !== postmaster || owner.postmasterIdentity === null)
    return false
  if (processIdentity(postmaster) !== owner.postmasterIdentity) return false
  const directory = workingDirectoryOf(postmaster)
  if (directory === null || directory !== realPath(databaseDir)) return false
  if (!processAlive(owner.pid)) return true
  const identity = processIdentity(owner.pid)
  return identity !== null && owner.identity !== null && identity !== owner.identity
}

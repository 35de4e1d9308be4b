// What the HTTP benchmark's processes use, read from /proc (Linux): memory (RSS of one process, PSS of a tree
// of them) and CPU time, so that a run says what each side costs per request besides how fast it went.
import { readdirSync, readFileSync } from "node:fs"

const kilobytesIn = (file: string, field: string) => {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(file, "utf8"))
    return match?.[1] === undefined ? 0 : Number(match[1])
  } catch {
    return 0
  }
}

/** The resident set of one process, in MB (0 once it is gone). */
export const rssMb = (pid: number) => kilobytesIn(`/proc/${pid}/status`, "VmRSS") / 1024

/** Every process below `pid` (of command `command` when given), found through each process's parent pid. */
export const descendantsOf = (pid: number, command?: string): Array<number> => {
  const children = new Map<number, Array<number>>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const parent = Number(statFields(Number(entry))?.[1])
    if (Number.isInteger(parent)) children.set(parent, [...(children.get(parent) ?? []), Number(entry)])
  }
  const found: Array<number> = []
  const queue = [pid]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      found.push(child)
      queue.push(child)
    }
  }
  if (command === undefined) return found
  return found.filter((child) => {
    try {
      return readFileSync(`/proc/${child}/comm`, "utf8").trim() === command
    } catch {
      return false
    }
  })
}

/**
 * The proportional set of `pids` together, in MB: shared memory (PostgreSQL's shared buffers) is split
 * between the processes that map it instead of being counted once per process, as a sum of RSS would.
 */
export const pssMb = (pids: ReadonlyArray<number>) =>
  pids.reduce((sum, pid) => sum + kilobytesIn(`/proc/${pid}/smaps_rollup`, "Pss"), 0) / 1024

/** The highest memory seen while sampling a process (RSS) and its PostgreSQL processes (PSS together). */
export interface MemoryPeak {
  readonly rssMb: number
  readonly postgresPssMb: number
}

/**
 * Samples the memory of `pid` every 250 ms, and of the PostgreSQL processes below it every second when it has
 * some (`postgres`; walking /proc costs the load generator's CPU), until the returned `stop` is called, which
 * gives the peaks.
 */
export const sampleMemory = (pid: number, postgres = true) => {
  let rss = 0
  let descendants = 0
  let samples = 0
  const sample = () => {
    rss = Math.max(rss, rssMb(pid))
    if (postgres && samples++ % 4 === 0)
      descendants = Math.max(descendants, pssMb(descendantsOf(pid, "postgres")))
  }
  sample()
  const timer = setInterval(sample, 250)
  return {
    stop: (): MemoryPeak => {
      clearInterval(timer)
      samples = 0
      sample()
      return { rssMb: rss, postgresPssMb: descendants }
    },
  }
}

/** Clock ticks per second of the CPU times in /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100

/** The fields of /proc/<pid>/stat after the command name (which is in parentheses and may hold spaces). */
const statFields = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return null
  }
}

/** The CPU time of one process, in milliseconds: user + system (fields 14 and 15 of stat). */
export const cpuMsOf = (pid: number) => {
  const fields = statFields(pid)
  return fields === null ? 0 : ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
}

/**
 * The CPU time of every process below `pid`, in milliseconds, including the children they have reaped (the
 * PostgreSQL backends that ended), so that the difference of two readings is what the tree used in between.
 */
export const descendantsCpuMsOf = (pid: number, command?: string) =>
  descendantsOf(pid, command).reduce((sum, child) => {
    const fields = statFields(child)
    if (fields === null) return sum
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
    return sum + (ticks * 1000) / TICKS_PER_SECOND
  }, 0)

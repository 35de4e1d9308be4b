import { existsSync, readFileSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import {
  DatabaseLive,
  databaseConfig,
  EmbeddedServerError,
  embeddedServerOwner,
  orphanedServerOn,
} from "@points/infrastructure"
import { Console, Data, Effect, Layer, Option } from "effect"

/** The embedded database under DATA_DIR is already served by another process (typically `npm start`). */
export class DatabaseInUse extends Data.TaggedError("DatabaseInUse")<{
  readonly dataDir: string
  /** The server's postmaster. */
  readonly pid: number
  readonly port: number | null
  /** The process of the platform that runs it, when one is on record. */
  readonly owner: number | null
}> {
  override get message() {
    const where = this.port === null ? "" : ` on 127.0.0.1:${this.port}`
    const server = `its PostgreSQL server is pid ${this.pid}${where}`
    return [
      this.owner === null
        ? `The embedded PostgreSQL under ${this.dataDir} is in use by a server no process of the platform started (${server}).`
        : `The embedded PostgreSQL under ${this.dataDir} is in use by process ${this.owner}, probably \`npm start\` (${server}).`,
      "Only one server can run on a data directory. Either:",
      `  - stop ${this.owner === null ? "that server" : `process ${this.owner} (not the server: it stops its server itself)`} and run this command again, or`,
      `  - point the CLI at the running server: DATABASE_URL=postgres://postgres:postgres@127.0.0.1:${this.port ?? "<port>"}/points npm run admin -- ...`,
      "  - or use the admin API of the running server (ADMIN_TOKEN): POST /admin/api/partners, POST /admin/api/partners/{partner_id}/clients, ...",
    ].join("\n")
  }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user (the server runs as the `postgres` OS user).
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

// PostgreSQL's lock file: line 1 the postmaster's pid, line 4 its port. A stale file (its process gone) is
// not a conflict: PostgreSQL removes it itself on start.
const runningServer = (dataDir: string): Option.Option<DatabaseInUse> => {
  let text: string
  try {
    text = readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8")
  } catch {
    return Option.none()
  }
  const [pidLine, , , portLine] = text.split("\n")
  const pid = Number.parseInt(pidLine ?? "", 10)
  const port = Number.parseInt(portLine ?? "", 10)
  if (!(Number.isInteger(pid) && pid > 0 && isAlive(pid))) return Option.none()
  return Option.some(
    new DatabaseInUse({
      dataDir,
      pid,
      port: Number.isInteger(port) ? port : null,
      owner: embeddedServerOwner(dataDir) ?? null,
    }),
  )
}

/**
 * The database of the admin CLI: `DatabaseLive`, as the server uses it (DATABASE_URL, or the embedded server
 * under DATA_DIR), but failing with `DatabaseInUse` instead of a bare start failure when another process
 * already serves that data directory (not one a killed process left: that one is stopped, as at the API's
 * start).
 */
export const AdminDatabaseLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* databaseConfig
    if (Option.isSome(config.url)) return DatabaseLive
    const dataDir = resolve(config.dataDir)
    // A server that a killed process left running is the start's to stop (it says so), as for the API.
    const inUse = runningServer(dataDir)
    if (Option.isSome(inUse) && !orphanedServerOn(dataDir)) return Layer.fail(inUse.value)
    // A data directory that does not exist yet is made empty: say so (on stderr), since a mistyped DATA_DIR
    // would otherwise look like a database without partners.
    // (Not for a DATA_DIR that is a file: the start says why that cannot be used.)
    if (
      !existsSync(join(dataDir, "postgres")) &&
      !(existsSync(dataDir) && !statSync(dataDir).isDirectory())
    ) {
      yield* Console.error(
        `Note: no database under ${dataDir} yet (DATA_DIR); a new, empty one is created there. The server's is under the DATA_DIR it runs with (default .data/ of its working directory), or set DATABASE_URL.`,
      )
    }
    // Checked again on a failed start: the other process may have started between the check and ours.
    return Layer.catchAll(DatabaseLive, (error) =>
      Layer.fail(
        error instanceof EmbeddedServerError && error.step === "start"
          ? Option.getOrElse(runningServer(dataDir), () => error)
          : error,
      ),
    )
  }),
)

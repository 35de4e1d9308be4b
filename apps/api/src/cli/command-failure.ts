import { MigrationError } from "@effect/sql/Migrator"
import { SqlError } from "@effect/sql/SqlError"
import { EmbeddedServerError, StartFailure, uuidV7 } from "@points/infrastructure"
import { ConfigError, Console, Data, Effect } from "effect"
import { isDatabaseUnreachable, isPlatformError, unavailable, unexpected } from "../http/api-error-of.js"
import { DatabaseInUse } from "./admin-database.js"
import type { OutputMode } from "./output.js"

/** Exit codes of the admin CLI. */
export const ExitCode = {
  /** The command was refused (a domain error such as LE0002) or could not run (database unreachable). */
  failed: 1,
  /** The command line itself was wrong (unknown command, missing argument); @effect/cli printed why. */
  usage: 2,
  /** `projections verify` ran and found read models that differ from the log (as `diff` exits 1 on a difference). */
  drift: 3,
  /** Stopped by SIGINT/SIGTERM (128 + SIGINT, as shells report it). */
  interrupted: 130,
} as const

/** A command failed and its reason has already been printed; the process exits with `exitCode`. */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly exitCode: number }> {}

/** One printable reason: the published code when there is one, and a message without internals. */
export interface Reason {
  readonly code: string
  readonly message: string
}

const causeText = (cause: unknown) =>
  cause instanceof Error ? cause.message : cause === undefined ? "no detail" : String(cause)

// The API's answer (503 SV5003 or 500 SV5000, its code and message) with what an operator needs beside it,
// which the API keeps from its clients.
const asApiAnswers = (answer: typeof unavailable, detail: string): Reason => {
  const { code, message } = answer().errors[0]
  return { code, message: `${message} (${detail})` }
}

// Domain errors carry their published code and message, and the database's failures the API's codes; the
// CLI's own failures get a code of ours so a script can tell them apart, and a message that says what to do.
const reasonOf = (error: unknown): Reason => {
  if (isPlatformError(error)) return { code: error.code, message: error.message }
  if (error instanceof DatabaseInUse) return { code: "DATABASE_IN_USE", message: error.message }
  if (error instanceof EmbeddedServerError)
    return asApiAnswers(
      unavailable,
      `could not ${error.step} the embedded PostgreSQL under DATA_DIR (${error.dataDir}): ${causeText(error.cause)}; set DATABASE_URL to use another server`,
    )
  // The embedded server's start problems said in one line (DATA_DIR not a directory, data it refuses).
  if (error instanceof StartFailure)
    return asApiAnswers(unavailable, `${error.message}; set DATABASE_URL to use another server`)
  if (error instanceof SqlError)
    return isDatabaseUnreachable(error)
      ? asApiAnswers(unavailable, `the database is out of reach: ${causeText(error.cause)}`)
      : asApiAnswers(unexpected, `database error: ${causeText(error.cause ?? error.message)}`)
  if (error instanceof MigrationError)
    return asApiAnswers(unexpected, `database migration failed: ${error.message}`)
  if (ConfigError.isConfigError(error)) return { code: "INVALID_CONFIGURATION", message: String(error) }
  return { code: "UNEXPECTED", message: causeText(error) }
}

/**
 * Prints why a command failed on stderr (`Error LE0002: partner not found`, or with `--json` the published
 * error body shape) and fails with `CommandFailed`, so the process exits non-zero.
 */
export const reportFailure = (mode: OutputMode) => (error: unknown) =>
  Effect.zipRight(
    Console.error(failureText(mode, reasonOf(error))),
    Effect.fail(new CommandFailed({ exitCode: ExitCode.failed })),
  )

/** A failure as the CLI prints it on stderr: `Error CODE: message`, or with `--json` the published error body. */
export const failureText = (mode: OutputMode, reason: Reason) =>
  mode.json
    ? // Each entry with an id of its own, as the API's entries have.
      JSON.stringify({ errors: [{ id: uuidV7(), ...reason }] }, null, 2)
    : `Error ${reason.code}: ${reason.message}`

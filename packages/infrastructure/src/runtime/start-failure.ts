import { SqlError } from "@effect/sql"
import { Cause, ConfigError, Data, Option } from "effect"

/** A service that cannot start, said in one line for its operator: what is wrong and which setting to fix. */
export class StartFailure extends Data.TaggedError("StartFailure")<{ readonly message: string }> {}

/** The innermost message of an error's causes: `connect ECONNREFUSED 127.0.0.1:5432`, not the wrapper's. */
export const rootMessage = (error: unknown): string => {
  let current = error
  while (current instanceof Error && current.cause instanceof Error) current = current.cause
  return current instanceof Error ? current.message : String(current)
}

// Every failure of a settings read, each said once: a variable read by two parts of one process (`npm start`
// reads the API's settings and the projections', both WEBHOOK_ALLOW_PRIVATE_TARGETS) fails in each part.
const settingsProblems = (error: ConfigError.ConfigError): string => {
  const problems = new Set<string>()
  const collect = (node: ConfigError.ConfigError): void => {
    if (ConfigError.isAnd(node)) {
      collect(node.left)
      collect(node.right)
    } else problems.add(String(node))
  }
  collect(error)
  return [...problems].join(" and ")
}

/**
 * The one line an operator reads when a service does not start, for the failures an operator fixes (a
 * setting, the database, the address): undefined for anything else, which is logged with its cause.
 */
export const startProblemOf = (cause: Cause.Cause<unknown>): string | undefined =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => undefined,
    onSome: (error) => {
      if (error instanceof StartFailure) return error.message
      if (ConfigError.isConfigError(error)) return `bad settings: ${settingsProblems(error)}`
      if (error instanceof SqlError.SqlError)
        return `the database (DATABASE_URL, or the embedded server) cannot be used: ${rootMessage(error)}`
      // The embedded server's failures (EmbeddedServerError, by tag: runtime/ does not import database/).
      if (error instanceof Error && (error as { readonly _tag?: unknown })._tag === "EmbeddedServerError") {
        const { step, dataDir, cause } = error as unknown as {
          readonly step: string
          readonly dataDir: string
          readonly cause: unknown
        }
        return `the embedded PostgreSQL could not ${step} on DATA_DIR (${dataDir}): ${rootMessage(cause)}`
      }
      return undefined
    },
  })

import { SqlError } from "@effect/sql"

/** True for a statement PostgreSQL refused with this SQLSTATE (e.g. `40P01`, a deadlock broken). */
export const hasSqlState = (error: unknown, sqlState: string) =>
  error instanceof SqlError.SqlError &&
  typeof error.cause === "object" &&
  error.cause !== null &&
  (error.cause as { code?: unknown }).code === sqlState

/** True for a lock not obtained within `lock_timeout` (SQLSTATE 55P03). */
export const isLockNotAvailable = (error: unknown) => hasSqlState(error, "55P03")

/**
 * True for a statement that failed because its session had ended: the server shutting down or the backend
 * terminated (SQLSTATE 57P01-57P05; not 57014, a cancelled statement of a live session), or the client's
 * connection already gone.
 */
export const isSessionEnded = (error: unknown) => {
  if (!(error instanceof SqlError.SqlError)) return false
  const cause = error.cause as { readonly code?: unknown; readonly message?: unknown } | null | undefined
  if (typeof cause?.code === "string" && cause.code.startsWith("57P")) return true
  return typeof cause?.message === "string" && /Connection terminated|not queryable/.test(cause.message)
}

import { SqlError } from "@effect/sql"

/** True for a statement PostgreSQL refused with this SQLSTATE (e.g. `40P01`, a deadlock broken). */
export const hasSqlState = (error: unknown, sqlState: string) =>
  error instanceof SqlError.SqlError &&
  typeof error.cause === "object" &&
  error.cause !== null &&
  (error.cause as { code?: unknown }).code === sqlState

/** True for a lock not obtained within `lock_timeout` (SQLSTATE 55P03). */
export const isLockNotAvailable = (error: unknown) => hasSqlState(error, "55P03")

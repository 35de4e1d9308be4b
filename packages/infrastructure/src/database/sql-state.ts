import { SqlError } from "@effect/sql"

/** True for a statement PostgreSQL refused with this SQLSTATE (e.g. `40P01`, a deadlock broken). */
export const hasSqlState = (error: unknown, sqlState: string) =>
  error instanceof SqlError.SqlError &&
  typeof error.cause === "object" &&
  error.cause !== null &&
  (error.cause as { code?: unknown }).code === sqlState

/** PostgreSQL's SQLSTATE for a lock not obtained within `lock_timeout`. */
export const LOCK_NOT_AVAILABLE = "55P03"

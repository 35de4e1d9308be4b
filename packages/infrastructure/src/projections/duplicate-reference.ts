import type { SqlError } from "@effect/sql"
import { DuplicateReferenceId, type ReferenceKind } from "@points/domain"
import { Effect } from "effect"

/** The unique indexes that keep a partner's reference ids unique per kind, behind the Reference streams. */
export const referenceIndexes = {
  transaction: "points_transactions_unique_reference",
  order: "orders_unique_reference",
} as const satisfies Record<ReferenceKind, string>

interface PostgresError {
  readonly code?: unknown
  readonly constraint?: unknown
  readonly detail?: unknown
}

// PostgreSQL reports the key as `Key (partner_id, reference_id)=(<uuid>, <reference id>) already exists.`;
// the uuid holds no comma, so everything after the first ", " is the reference id.
const referenceInDetail = (detail: unknown): string | null => {
  if (typeof detail !== "string") return null
  const match = /^Key \(partner_id, reference_id\)=\([^,]+, (.*)\) already exists\.$/s.exec(detail)
  return match?.[1] ?? null
}

/**
 * Turns a unique violation of the reference index of `kind` into LE0006 naming the reference id (from the
 * database's report, else `fallback`); every other failure passes through. The statement's transaction is
 * aborted either way, so the unit of work rolls back.
 */
export const duplicateReferenceAs =
  (kind: ReferenceKind, fallback: string) =>
  <A, R>(
    write: Effect.Effect<A, SqlError.SqlError, R>,
  ): Effect.Effect<A, SqlError.SqlError | DuplicateReferenceId, R> =>
    Effect.catchIf(
      write,
      (error) => {
        const cause = error.cause as PostgresError | undefined
        return cause?.code === "23505" && cause.constraint === referenceIndexes[kind]
      },
      (error) =>
        Effect.fail(
          new DuplicateReferenceId({
            kind,
            referenceId: referenceInDetail((error.cause as PostgresError).detail) ?? fallback,
          }),
        ),
    )

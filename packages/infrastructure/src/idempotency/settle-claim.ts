import { SqlClient } from "@effect/sql"
import { IdempotencyKey, InvariantViolation, type PartnerId } from "@points/domain"
import { DateTime, Effect } from "effect"
import type { HeldClaim } from "./claim-key.js"
import { ClaimLost } from "./claim-lost.js"
import { atDatabaseTime } from "./database-time.js"
import { type KeyRow, keyColumns, stateAssignments, stateOfRow, stateValues } from "./key-row.js"

/** Which claim to settle: the key, and the token its claim returned. */
export interface ClaimReference {
  readonly partnerId: PartnerId
  readonly key: IdempotencyKey.IdempotencyKeyValue
  readonly claimToken: string
}

/**
 * Runs a command that ends a claim (RecordResponse, ReleaseKey) on the key's state, in the caller's
 * transaction, and writes the state it leads to. Both the read and the write are guarded by the claim token:
 * a key that no longer carries it was taken over (or reaped), and the caller fails with ClaimLost. Returns
 * the key's state after the command, and whether the command changed it.
 */
export const settleClaim = (
  claim: ClaimReference,
  command: IdempotencyKey.RecordResponse | IdempotencyKey.ReleaseKey,
  held?: HeldClaim,
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Made only when needed: an error captures a stack trace, and most settlements succeed.
    const lost = () => new ClaimLost({ partnerId: claim.partnerId, key: claim.key })
    // A claim made in this transaction holds the row since: its state and time need no second read.
    const row =
      held === undefined
        ? // FOR UPDATE: a takeover in flight finishes first, and then this read no longer finds our token.
          (yield* sql.unsafe<KeyRow & { readonly db_now: Date }>(
            `SELECT ${keyColumns}, now() AS db_now FROM idempotency_keys
             WHERE partner_id = $1 AND key = $2 AND claim_token = $3 FOR UPDATE`,
            [claim.partnerId, claim.key, claim.claimToken],
          ))[0]
        : { db_now: DateTime.toDate(held.now) }
    if (row === undefined) return yield* lost()
    const state = held === undefined ? stateOfRow(row as KeyRow) : held.state
    // A release after the claim was settled (the caller could not tell whether its commit went through) is
    // a no-op: only a claim still running can be given back.
    if (command._tag === "ReleaseKey" && state._tag !== "Claimed") return { state, changed: false }
    const events = yield* atDatabaseTime(DateTime.unsafeFromDate(row.db_now))(
      // Both commands only die on misuse (recording twice differently, settling a key not claimed).
      Effect.orDie(IdempotencyKey.decide(command, state)),
    )
    const next = events.reduce(IdempotencyKey.evolve, state)
    if (next._tag === "Unclaimed" || next._tag === "Expired") {
      return yield* Effect.die(new InvariantViolation(`settling a claim left the key ${next._tag}`))
    }
    if (events.length === 0) return { state: next, changed: false }
    const written = yield* sql.unsafe(
      `UPDATE idempotency_keys SET ${stateAssignments}, updated_at = $14
       WHERE partner_id = $1 AND key = $2 AND claim_token = $13
       RETURNING 1`,
      [claim.partnerId, claim.key, ...stateValues(next), claim.claimToken, row.db_now],
    )
    if (written.length !== 1) return yield* lost()
    return { state: next, changed: true }
  })

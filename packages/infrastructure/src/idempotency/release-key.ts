import { SqlClient } from "@effect/sql"
import { IdempotencyKey } from "@points/domain"
import { Effect } from "effect"
import { type ClaimReference, settleClaim } from "./settle-claim.js"

/**
 * Frees a claimed key without recording a response (the request ended with a status that is not recorded,
 * such as a 422 or a 5xx, outside its business transaction), so the same request may run again. Returns false,
 * changing nothing, when the key no longer holds this claim: it was taken over, reaped, or already settled.
 */
export const releaseKey = (claim: ClaimReference) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { partnerId, key } = claim
    return yield* sql
      .withTransaction(settleClaim(claim, IdempotencyKey.ReleaseKey.make({ partnerId, key })))
      .pipe(
        Effect.map((settled) => settled.changed),
        Effect.catchTag("ClaimLost", () => Effect.succeed(false)),
      )
  }).pipe(Effect.withSpan("idempotency.releaseKey"))

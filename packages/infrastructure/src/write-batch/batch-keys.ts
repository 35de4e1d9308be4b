import { SqlClient } from "@effect/sql"
import { IdempotencyKey, InvariantViolation, validatedElsewhere } from "@points/domain"
import { DateTime, Effect } from "effect"
import { type ClaimKeyRequest, keyLockName } from "../idempotency/claim-key.js"
import { atDatabaseTime } from "../idempotency/database-time.js"
import { keyInsertColumns, stateValues } from "../idempotency/key-row.js"
import { uuidV7 } from "../ids/uuid-v7.js"

/**
 * Try-locks every key of a batch (the advisory lock every claim of a key takes, held to the end of the
 * transaction) and sets the lease on the transaction as a claim does; returns which keys it holds and the
 * database time. Its own statement, so that the next one's snapshot sees whatever an earlier holder of a key
 * committed.
 */
export const lockKeys = (claims: ReadonlyArray<ClaimKeyRequest>, leaseSeconds: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ readonly locked: boolean; readonly now: Date }>(
      `SELECT pg_try_advisory_xact_lock(hashtextextended(k.name, 0)) AS locked, now() AS now,
              set_config('idle_in_transaction_session_timeout', $2, true) AS lease
       FROM unnest($1::text[]) WITH ORDINALITY AS k(name, n) ORDER BY k.n`,
      [claims.map(keyLockName), String(leaseSeconds * 1000)],
    )
    const now = rows[0]?.now
    if (rows.length !== claims.length || now === undefined) {
      return yield* Effect.die(new InvariantViolation("a key lock statement lost rows"))
    }
    return { locked: rows.map((row) => row.locked), now: DateTime.unsafeFromDate(now) }
  })

/** Which of the keys have a row already (any state): those are claimed one by one, as a claim decides. */
export const keysWithRows = (claims: ReadonlyArray<ClaimKeyRequest>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ readonly partner_id: string; readonly key: string }>(
      `SELECT partner_id::text AS partner_id, key FROM idempotency_keys
       WHERE (partner_id, key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`,
      [claims.map((claim) => claim.partnerId), claims.map((claim) => claim.key)],
    )
    return new Set(rows.map((row) => keyIdOf(row.partner_id, row.key)))
  })

/** A key's identity in a batch: its partner and its value. */
export const keyIdOf = (partnerId: string, key: string) => `${partnerId}:${key}`

// The row of one new key: the domain's claim of an unclaimed key, then its recorded response.
const completedKeyOf = (claim: ClaimKeyRequest, response: IdempotencyKey.RecordedResponse) =>
  Effect.gen(function* () {
    const { partnerId, key } = claim
    // Commands of values already checked (the claim request's, the response built from a resource): not
    // validated again on make (see validatedElsewhere).
    const claimed = yield* IdempotencyKey.decide(
      IdempotencyKey.ClaimKey.make(
        {
          partnerId,
          key,
          fingerprint: claim.fingerprint,
          leaseSeconds: claim.leaseSeconds,
          lifetimeSeconds: claim.lifetimeSeconds,
        },
        validatedElsewhere,
      ),
      IdempotencyKey.unclaimed,
    )
    const afterClaim = claimed.reduce(IdempotencyKey.evolve, IdempotencyKey.unclaimed)
    const recorded = yield* IdempotencyKey.decide(
      IdempotencyKey.RecordResponse.make({ partnerId, key, response }, validatedElsewhere),
      afterClaim,
    )
    const state = recorded.reduce(IdempotencyKey.evolve, afterClaim)
    if (state._tag !== "Completed") {
      return yield* Effect.die(new InvariantViolation(`answering a new key left it ${state._tag}`))
    }
    return { claim, state }
  })

/**
 * The rows of new keys that requests claimed and answered in the same transaction, each decided as the
 * domain decides a claim of an unclaimed key and then its recorded response, all at the database time. The
 * clock is pinned once for the batch: pinning it is an `Effect.locally`, ~26 runtime operations each time.
 */
export const completedKeysOf = (
  answered: ReadonlyArray<{
    readonly claim: ClaimKeyRequest
    readonly response: IdempotencyKey.RecordedResponse
  }>,
  now: DateTime.Utc,
) => atDatabaseTime(now)(Effect.forEach(answered, ({ claim, response }) => completedKeyOf(claim, response)))

/** Inserts the rows of new keys, completed with their responses, in one statement. */
export const insertCompletedKeys = (
  keys: ReadonlyArray<{ readonly claim: ClaimKeyRequest; readonly state: IdempotencyKey.LiveKey }>,
  now: DateTime.Utc,
) =>
  Effect.gen(function* () {
    if (keys.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const values = keys.map(({ state }) => stateValues(state))
    const column = (n: number) => values.map((row) => row[n] ?? null)
    yield* sql.unsafe(
      `INSERT INTO idempotency_keys (${keyInsertColumns})
       SELECT k.partner_id, k.key, k.state, k.method, k.path, k.body_sha256, k.first_received_at,
              k.expires_at, k.lease_expires_at, k.response_status, k.response_headers::jsonb,
              k.response_body, k.claim_token, $14
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                   $7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::integer[], $11::text[],
                   $12::text[], $13::uuid[])
         AS k(partner_id, key, state, method, path, body_sha256, first_received_at, expires_at,
              lease_expires_at, response_status, response_headers, response_body, claim_token)`,
      [
        keys.map(({ claim }) => claim.partnerId),
        keys.map(({ claim }) => claim.key),
        ...Array.from({ length: 10 }, (_, n) => column(n)),
        keys.map(() => uuidV7()),
        DateTime.toDate(now),
      ],
    )
  })

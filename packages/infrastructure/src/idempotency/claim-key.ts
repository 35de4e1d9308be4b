import { SqlClient, type SqlError } from "@effect/sql"
import {
  IdempotencyKey,
  IdempotencyKeyInProgress,
  type IdempotencyKeyReused,
  InvariantViolation,
  type PartnerId,
} from "@points/domain"
import { Data, DateTime, Effect, Option } from "effect"
import { uuidV7 } from "../ids/uuid-v7.js"
import { atDatabaseTime } from "./database-time.js"
import {
  type KeyRow,
  keyColumns,
  keyInsertColumns,
  stateAssignments,
  stateOfRow,
  stateValues,
} from "./key-row.js"

/** A request asking to use a partner's key. */
export interface ClaimKeyRequest {
  readonly partnerId: PartnerId
  readonly key: IdempotencyKey.IdempotencyKeyValue
  readonly fingerprint: IdempotencyKey.RequestFingerprint
  /** How long the claim holds if this process dies before it finishes. */
  readonly leaseSeconds: number
  /** How long the key is honoured after its first receipt (IDEMPOTENCY_TTL_SECONDS). */
  readonly lifetimeSeconds: number
}

/**
 * What the request may do: execute, holding the key under `claimToken` until it records or releases it
 * (`takeover` when the key was taken from a request whose lease ran out), or answer with the recorded response.
 */
export type ClaimOutcome = Data.TaggedEnum<{
  Execute: { readonly claimToken: string; readonly takeover: boolean }
  Replay: { readonly response: IdempotencyKey.RecordedResponse }
}>

/** Constructors and matchers for claim outcomes. */
export const ClaimOutcome = Data.taggedEnum<ClaimOutcome>()

/**
 * The name of a key's advisory lock, which every claim of the key takes (hashed) for its transaction. A
 * partner id is a fixed-length UUID, so the text is unambiguous; a 64-bit hash collision only makes two keys
 * refuse each other with IK1002 for the length of a claim.
 */
export const keyLockName = (request: Pick<ClaimKeyRequest, "partnerId" | "key">) =>
  `idempotency:${request.partnerId}:${request.key}`

const upsertClaim = `
  INSERT INTO idempotency_keys (${keyInsertColumns})
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14)
  ON CONFLICT (partner_id, key) DO UPDATE SET ${stateAssignments}, claim_token = $13, updated_at = $14`

// A new key's claim, written only if the key has no row. The statement's snapshot is taken after the
// try-lock, so it sees every earlier claim of the key (all are made under that lock); a row being written
// right now by a request recording its response is visible as it was, and the insert does not wait for it.
const insertNewClaim = `
  INSERT INTO idempotency_keys (${keyInsertColumns})
  SELECT $1::uuid, $2::text, $3::text, $4::text, $5::text, $6::text, $7::timestamptz, $8::timestamptz,
         $9::timestamptz, $10::integer, $11::jsonb, $12::text, $13::uuid, $14::timestamptz
  WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys WHERE partner_id = $1::uuid AND key = $2::text)
  ON CONFLICT (partner_id, key) DO NOTHING RETURNING 1`

/** What a claim made inside the caller's transaction knows: the key's state as claimed, and the database time. */
export interface HeldClaim {
  readonly state: IdempotencyKey.LiveKey
  readonly now: DateTime.Utc
}

/** An Execute outcome of a claim inside a transaction, with what recording its response needs. */
export type HeldOutcome =
  | (Extract<ClaimOutcome, { _tag: "Execute" }> & { readonly held: HeldClaim })
  | Extract<ClaimOutcome, { _tag: "Replay" }>

// The claim itself, in whatever transaction runs it: try-lock, read the row, decide, write the claim.
const claimHere = (request: ClaimKeyRequest) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const command = IdempotencyKey.ClaimKey.make({
      partnerId: request.partnerId,
      key: request.key,
      fingerprint: request.fingerprint,
      leaseSeconds: request.leaseSeconds,
      lifetimeSeconds: request.lifetimeSeconds,
    })
    // The try-lock serialises claims of one key, including one not yet in the table, without waiting.
    // It is its own statement so that the next statement's snapshot sees the previous holder's commit.
    // The lease, for a claim held by the business transaction itself: PostgreSQL ends a transaction left idle
    // longer than the lease (its process hung, or vanished without closing the socket), which rolls the claim
    // back, so the key is taken over after the lease, as DESIGN.md section 4 says (a killed process's claim
    // goes at once, with its connection). Transaction-local, so the pooled connection keeps no such limit.
    const [lock] = yield* sql<{ locked: boolean; now: Date }>`
      SELECT pg_try_advisory_xact_lock(hashtextextended(${keyLockName(request)}, 0)) AS locked, now() AS now,
             set_config('idle_in_transaction_session_timeout', ${String(request.leaseSeconds * 1000)}, true)`
    if (lock === undefined) return yield* new IdempotencyKeyInProgress()
    const now = DateTime.unsafeFromDate(lock.now)
    const claimToken = uuidV7()
    const decideOn = (state: IdempotencyKey.IdempotencyKeyState) =>
      Effect.gen(function* () {
        const events = yield* atDatabaseTime(now)(IdempotencyKey.decide(command, state))
        return { events, next: events.reduce(IdempotencyKey.evolve, state) }
      })

    // Another request holds the key's lock or row: it is claiming the key, recording its response, or only
    // replaying it. The key is decided on as last committed, without writing: a completed key (it changes no
    // more until it expires) is replayed, another request's is IK1001, and whatever would need a write (a
    // claim, a takeover) is IK1002: the other request is doing it.
    const committedState = Effect.map(
      sql.unsafe<KeyRow>(`SELECT ${keyColumns} FROM idempotency_keys WHERE partner_id = $1 AND key = $2`, [
        request.partnerId,
        request.key,
      ]),
      (rows) => (rows[0] === undefined ? IdempotencyKey.unclaimed : stateOfRow(rows[0])),
    )
    const answerWithoutLock = (state: IdempotencyKey.IdempotencyKeyState) =>
      Effect.gen(function* () {
        const { events } = yield* decideOn(state)
        if (events.length > 0 || state._tag !== "Completed") return yield* new IdempotencyKeyInProgress()
        return ClaimOutcome.Replay({ response: state.response }) as HeldOutcome
      })
    if (!lock.locked) return yield* Effect.flatMap(committedState, answerWithoutLock)
    const executed = (
      events: ReadonlyArray<IdempotencyKey.IdempotencyKeyEvent>,
      next: IdempotencyKey.LiveKey,
    ) =>
      ({
        ...ClaimOutcome.Execute({
          claimToken,
          takeover: events.some((event) => event._tag === "KeyClaimed" && event.takeover),
        }),
        held: { state: next, now },
      }) as HeldOutcome
    const claimValues = (next: IdempotencyKey.LiveKey) => [
      request.partnerId,
      request.key,
      ...stateValues(next),
      claimToken,
      DateTime.toDate(now),
    ]

    // Most keys are new: the claim an unclaimed key leads to is inserted if the key has no row (one round
    // trip); otherwise the row is read and decided on.
    const fresh = yield* decideOn(IdempotencyKey.unclaimed)
    if (fresh.next._tag !== "Claimed") {
      return yield* Effect.die(new InvariantViolation(`a claim left an unclaimed key ${fresh.next._tag}`))
    }
    const inserted = yield* sql.unsafe(insertNewClaim, claimValues(fresh.next))
    if (inserted.length === 1) return executed(fresh.events, fresh.next)

    // The row, locked for this claim. SKIP LOCKED rather than NOWAIT, whose error would abort the transaction:
    // a row locked by a request recording its response right now (or replaying it) comes back as no row, and
    // the key is then answered without its row lock. A row that vanished in between (the reaper removed an
    // expired key) is decided on as unclaimed, under this claim's lock.
    const rows = yield* sql.unsafe<KeyRow>(
      `SELECT ${keyColumns} FROM idempotency_keys WHERE partner_id = $1 AND key = $2 FOR UPDATE SKIP LOCKED`,
      [request.partnerId, request.key],
    )
    let state: IdempotencyKey.IdempotencyKeyState
    if (rows[0] === undefined) {
      state = yield* committedState
      if (state._tag !== "Unclaimed") return yield* answerWithoutLock(state)
    } else {
      state = stateOfRow(rows[0])
    }
    const { events, next } = yield* decideOn(state)
    if (events.length === 0) {
      if (state._tag !== "Completed") {
        return yield* Effect.die(new InvariantViolation(`a claim changed nothing on a ${state._tag} key`))
      }
      return ClaimOutcome.Replay({ response: state.response }) as HeldOutcome
    }
    if (next._tag !== "Claimed") {
      return yield* Effect.die(new InvariantViolation(`a claim left the key ${next._tag}`))
    }
    yield* sql.unsafe(upsertClaim, claimValues(next))
    return executed(events, next)
  })

/**
 * Claims a partner's key for a request, in a short transaction of its own that commits before the business
 * work starts, so that the claim and its lease are visible to every concurrent request meanwhile. Never waits
 * on a lock: a key another request is claiming, or recording a response for, is IK1002 at once (a completed
 * key is replayed all the same, whoever holds its lock). A key claimed by a request whose lease ran out is
 * taken over. Fails with IK1001 when the key belongs to another
 * request, IK1002 while it is executing.
 */
export const claimKey = (
  request: ClaimKeyRequest,
): Effect.Effect<
  ClaimOutcome,
  IdempotencyKeyReused | IdempotencyKeyInProgress | SqlError.SqlError,
  SqlClient.SqlClient
> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Inside a caller's transaction the claim would only be a savepoint: invisible to concurrent requests
    // until the business work commits, which is exactly the race the lease exists to close.
    if (Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))) {
      return yield* Effect.die(new InvariantViolation("claimKey must not run inside a transaction"))
    }
    const outcome = yield* sql.withTransaction(claimHere(request))
    return outcome._tag === "Execute"
      ? ClaimOutcome.Execute({ claimToken: outcome.claimToken, takeover: outcome.takeover })
      : outcome
  }).pipe(Effect.withSpan("idempotency.claimKey"))

/**
 * Claims a partner's key inside the caller's (business) transaction, which must record the response in it
 * with `recordResponse({ ..., held })`: one transaction and one commit per request instead of two. The
 * claim's advisory lock and row lock hold until that transaction ends, so a concurrent request with the key
 * still gets IK1002 at once (it never waits; a retry of a completed key is replayed), and a request whose process dies leaves nothing behind: its
 * transaction rolls back, claim included, and the key is free for the retry. Fails as `claimKey` does.
 */
export const claimKeyInTransaction = (
  request: ClaimKeyRequest,
): Effect.Effect<
  HeldOutcome,
  IdempotencyKeyReused | IdempotencyKeyInProgress | SqlError.SqlError,
  SqlClient.SqlClient
> =>
  Effect.gen(function* () {
    if (Option.isNone(yield* Effect.serviceOption(SqlClient.TransactionConnection))) {
      return yield* Effect.die(
        new InvariantViolation("claimKeyInTransaction must run inside the business transaction"),
      )
    }
    return yield* claimHere(request)
  }).pipe(Effect.withSpan("idempotency.claimKeyInTransaction"))

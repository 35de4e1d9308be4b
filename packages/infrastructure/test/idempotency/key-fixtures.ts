import { createHash } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { IdempotencyKey, PartnerId } from "@points/domain"
import { Effect, Layer, Schedule } from "effect"
import { uuidv7 as uuidV7 } from "uuidv7"
import { type ClaimKeyRequest, type ClaimReference, recordResponse } from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"

/** A fresh database for one test file, with the scratch table that stands for a request's business effect. */
export const idempotencyTestDatabase = (options: { readonly poolSize?: number } = {}) =>
  Layer.effectDiscard(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql`CREATE TABLE business_effects (partner_id uuid NOT NULL, key text NOT NULL, note text NOT NULL)`,
    ),
  ).pipe(Layer.provideMerge(testDatabase(options)))

/** A fresh partner. */
export const newPartner = () => PartnerId.make(uuidV7())

/** A fresh key (unique per test, so tests never share one). */
export const newKey = (label = "key") => IdempotencyKey.IdempotencyKeyValue.make(`${label}-${uuidV7()}`)

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** The fingerprint of a request: POST /api/orders with a body, unless told otherwise. */
export const fingerprint = (
  overrides: { readonly method?: string; readonly path?: string; readonly body?: string } = {},
): IdempotencyKey.RequestFingerprint => ({
  method: overrides.method ?? "POST",
  path: overrides.path ?? "/api/orders",
  bodySha256: sha256(overrides.body ?? '{"items":[{"points":10,"quantity":1,"sku":"A"}]}'),
})

/** A claim of `key` for `partnerId`: 30 s lease and 24 h lifetime unless told otherwise. */
export const claimOf = (
  partnerId: PartnerId,
  key: IdempotencyKey.IdempotencyKeyValue,
  overrides: Partial<Omit<ClaimKeyRequest, "partnerId" | "key">> = {},
): ClaimKeyRequest => ({
  partnerId,
  key,
  fingerprint: overrides.fingerprint ?? fingerprint(),
  leaseSeconds: overrides.leaseSeconds ?? 30,
  lifetimeSeconds: overrides.lifetimeSeconds ?? 86_400,
})

/** A response with a status and a JSON body. */
export const response = (status: number, body: object = { status }): IdempotencyKey.RecordedResponse => ({
  status,
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(body),
})

/** The business effect of a request: one row, written in the request's transaction. */
export const insertEffect = (claim: { readonly partnerId: string; readonly key: string }, note: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO business_effects (partner_id, key, note) VALUES (${claim.partnerId}, ${claim.key}, ${note})`,
  )

/** The notes of the business effects that committed for a key. */
export const effectsOf = (claim: { readonly partnerId: string; readonly key: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ note: string }>`
        SELECT note FROM business_effects WHERE partner_id = ${claim.partnerId} AND key = ${claim.key}`,
      (rows) => rows.map((row) => row.note),
    ),
  )

/** What an executing request does: its business effect and its recorded response, in one transaction. */
export const executeRequest = (claim: ClaimReference, note: string, answer = response(201, { note })) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.zipRight(insertEffect(claim, note), recordResponse({ ...claim, response: answer })),
    ),
  )

/** A key's row as stored, or undefined. */
export const rowOf = (claim: { readonly partnerId: string; readonly key: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{
        state: string
        claim_token: string
        first_received_at: Date
        expires_at: Date
        lease_expires_at: Date | null
        response_status: number | null
        response_body: string | null
      }>`
        SELECT state, claim_token, first_received_at, expires_at, lease_expires_at, response_status, response_body
        FROM idempotency_keys WHERE partner_id = ${claim.partnerId} AND key = ${claim.key}`,
      (rows) => rows[0],
    ),
  )

/**
 * Lets `seconds` pass for one key: every time it holds moves that far into the past, as if the key had been
 * claimed that much earlier on the database's clock.
 */
export const age = (claim: { readonly partnerId: string; readonly key: string }, seconds: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      UPDATE idempotency_keys
      SET first_received_at = first_received_at - make_interval(secs => ${seconds}),
          expires_at = expires_at - make_interval(secs => ${seconds}),
          lease_expires_at = lease_expires_at - make_interval(secs => ${seconds})
      WHERE partner_id = ${claim.partnerId} AND key = ${claim.key}`,
  )

/** Polls a condition every 25 ms until it holds; fails after `seconds` (a bound, not a sleep). */
export const eventually = <E, R>(condition: Effect.Effect<boolean, E, R>, seconds = 10) =>
  condition.pipe(
    Effect.flatMap((holds) => (holds ? Effect.void : Effect.fail("not yet" as const))),
    Effect.retry(Schedule.spaced("25 millis").pipe(Schedule.upTo(`${seconds} seconds`))),
    Effect.orDieWith(() => new Error(`the condition did not hold within ${seconds} s`)),
  )

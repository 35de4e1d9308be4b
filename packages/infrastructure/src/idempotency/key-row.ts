import { IdempotencyKey, InvariantViolation, PartnerId } from "@points/domain"
import { DateTime, Schema } from "effect"

/** A row of `idempotency_keys` as the driver returns it (timestamptz arrives as a Date). */
export interface KeyRow {
  readonly partner_id: string
  readonly key: string
  readonly state: "Claimed" | "Completed" | "Released"
  readonly method: string
  readonly path: string
  readonly body_sha256: string
  readonly first_received_at: Date
  readonly expires_at: Date
  readonly lease_expires_at: Date | null
  readonly claim_token: string
  readonly response_status: number | null
  readonly response_headers: unknown
  readonly response_body: string | null
}

/** The column list every read of a key selects, in the order of KeyRow. */
export const keyColumns =
  "partner_id, key, state, method, path, body_sha256, first_received_at, expires_at, lease_expires_at, claim_token, response_status, response_headers, response_body"

const decodeResponse = Schema.decodeUnknownSync(IdempotencyKey.RecordedResponse)

/**
 * The decider state a row holds. A row that no state could have written (a Completed key without its
 * response) throws: it means a bug or a hand edit, and a key must never answer from a guess.
 */
export const stateOfRow = (row: KeyRow): IdempotencyKey.LiveKey => {
  const lifetime = {
    partnerId: PartnerId.make(row.partner_id),
    key: IdempotencyKey.IdempotencyKeyValue.make(row.key),
    fingerprint: { method: row.method, path: row.path, bodySha256: row.body_sha256 },
    firstReceivedAt: DateTime.unsafeFromDate(row.first_received_at),
    expiresAt: DateTime.unsafeFromDate(row.expires_at),
  }
  switch (row.state) {
    case "Claimed":
      if (row.lease_expires_at === null) throw new InvariantViolation("a claimed key without a lease")
      return { _tag: "Claimed", ...lifetime, leaseExpiresAt: DateTime.unsafeFromDate(row.lease_expires_at) }
    case "Completed":
      return {
        _tag: "Completed",
        ...lifetime,
        response: decodeResponse({
          status: row.response_status,
          headers: row.response_headers,
          body: row.response_body,
        }),
      }
    case "Released":
      return { _tag: "Released", ...lifetime }
  }
}

/**
 * The column values that store a live state, as positional parameters $3..$12 of the writes (after
 * partner_id and key): state, method, path, body_sha256, first_received_at, expires_at, lease_expires_at,
 * response_status, response_headers (JSON text), response_body.
 */
export const stateValues = (state: IdempotencyKey.LiveKey): ReadonlyArray<unknown> => {
  const response = state._tag === "Completed" ? state.response : null
  return [
    state._tag,
    state.fingerprint.method,
    state.fingerprint.path,
    state.fingerprint.bodySha256,
    DateTime.toDate(state.firstReceivedAt),
    DateTime.toDate(state.expiresAt),
    state._tag === "Claimed" ? DateTime.toDate(state.leaseExpiresAt) : null,
    response?.status ?? null,
    response === null ? null : JSON.stringify(response.headers),
    response?.body ?? null,
  ]
}

/** The columns an INSERT of a key writes: partner_id, key, the columns of stateValues, claim_token, updated_at. */
export const keyInsertColumns = `partner_id, key, state, method, path, body_sha256, first_received_at,
  expires_at, lease_expires_at, response_status, response_headers, response_body, claim_token, updated_at`

/** The SET list that writes the values of stateValues, for an UPDATE or an upsert. */
export const stateAssignments = `state = $3, method = $4, path = $5, body_sha256 = $6,
  first_received_at = $7, expires_at = $8, lease_expires_at = $9,
  response_status = $10, response_headers = $11::jsonb, response_body = $12`

import { DateTime } from "effect"
import type { ClientId, PartnerId } from "../shared/ids.js"
import type { SecretHash } from "./secret-hash.js"

/** A credential's lifecycle: active until revoked. */
export type CredentialStatus = "active" | "revoked"

/** A secret replaced by a rotation, accepted until `validUntil`. */
export interface PreviousSecret {
  readonly secretHash: SecretHash
  readonly validUntil: DateTime.Utc
}

/** A credential that was issued, as its stream describes it. */
export interface IssuedCredential {
  readonly _tag: "Issued"
  readonly clientId: ClientId
  readonly partnerId: PartnerId
  readonly name: string | null
  readonly secretHash: SecretHash
  /** The secret the last rotation replaced; at most one, so a rotation within a grace period drops the oldest. */
  readonly previousSecret: PreviousSecret | null
  readonly status: CredentialStatus
  readonly createdAt: DateTime.Utc
  readonly updatedAt: DateTime.Utc
  /** Grows with every event. */
  readonly version: number
}

/** The state of a client credential's stream: nothing yet, or an issued credential. */
export type CredentialState = { readonly _tag: "Unissued" } | IssuedCredential

/** The state before the first event. */
export const unissued: CredentialState = { _tag: "Unissued" }

/**
 * The secret hashes a client may authenticate with at `now`: the current one, plus the replaced one during
 * its grace period; none for a revoked or unissued credential.
 */
export const acceptedSecretHashes = (
  state: CredentialState,
  now: DateTime.Utc,
): ReadonlyArray<SecretHash> => {
  if (state._tag !== "Issued" || state.status === "revoked") return []
  const previous = state.previousSecret
  return previous !== null && DateTime.lessThan(now, previous.validUntil)
    ? [state.secretHash, previous.secretHash]
    : [state.secretHash]
}

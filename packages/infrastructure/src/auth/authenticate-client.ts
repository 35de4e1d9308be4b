import type { SqlClient, SqlError } from "@effect/sql"
import { ClientCredential, ClientId, InvalidClientCredentials, PartnerId } from "@points/domain"
import { DateTime, Effect, Option } from "effect"
import {
  type CredentialForAuthentication,
  findCredentialForAuthentication,
  replacedSecretValidUntil,
} from "../projections/credentials.js"
import { UNKNOWN_CLIENT_HASH, verifyClientSecret } from "./client-secret.js"

/** A client that proved it holds one of its credential's accepted secrets. */
export interface AuthenticatedClient {
  readonly clientId: ClientId
  readonly partnerId: PartnerId
  /** The hash the secret matched; a write that relies on it checks it is still accepted. */
  readonly secretHash: ClientCredential.SecretHash
  /** The time (Effect's Clock) at which the secret's grace period was judged. */
  readonly checkedAt: DateTime.Utc
}

// The rule of ClientCredential.acceptedSecretHashes, applied to the read model's row: nothing for a revoked
// credential; the current hash; the replaced one while replacedSecretValidUntil says it still gets tokens.
const acceptedHashes = (
  credential: CredentialForAuthentication,
  now: DateTime.Utc,
): ReadonlyArray<ClientCredential.SecretHash> => {
  if (credential.status !== "active") return []
  const current = ClientCredential.SecretHash.make(credential.secret_hash)
  const previous = credential.previous_secret_hash
  return previous !== null && replacedSecretValidUntil(credential, DateTime.toEpochMillis(now)) !== null
    ? [current, ClientCredential.SecretHash.make(previous)]
    : [current]
}

/**
 * Checks a client id and secret against the client's credential (read model, by client id alone: the
 * partner is learnt from it). GH1001 for an unknown or revoked client and for a wrong secret alike; an
 * unknown client still costs one Argon2id check, so timing does not reveal which client ids exist.
 */
export const authenticateClient = (
  clientId: string,
  secret: string,
): Effect.Effect<AuthenticatedClient, InvalidClientCredentials | SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const now = yield* DateTime.now
    const found = yield* findCredentialForAuthentication(clientId)
    const credential = Option.getOrNull(found)
    const candidates = credential === null ? [] : acceptedHashes(credential, now)
    if (credential === null || candidates.length === 0) {
      yield* verifyClientSecret(secret, UNKNOWN_CLIENT_HASH)
      return yield* new InvalidClientCredentials()
    }
    // At most two candidates (current and, during a rotation's grace period, the previous one).
    for (const hash of candidates) {
      if (yield* verifyClientSecret(secret, hash)) {
        return {
          clientId: ClientId.make(credential.client_id),
          partnerId: PartnerId.make(credential.partner_id),
          secretHash: hash,
          checkedAt: now,
        }
      }
    }
    return yield* new InvalidClientCredentials()
  })

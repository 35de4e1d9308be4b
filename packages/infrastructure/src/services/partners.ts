import { ClientCredential, ClientId, Partner, PartnerId, ResourceNotFound } from "@points/domain"
import { Effect } from "effect"
import { hashClientSecret, newClientSecret } from "../auth/client-secret.js"
import { revokeClientTokens } from "../auth/revoke-client-tokens.js"
import type { AppendContext } from "../event-store/recorded-event.js"
import { credentialStream, partnerStream, readOnly } from "../event-store/stream-handle.js"
import { uuidV7 } from "../ids/uuid-v7.js"
import { listCredentials } from "../projections/credentials.js"
import { getPartner, listPartners } from "../projections/partners.js"
import { getCredential } from "./get-credential.js"
import { clientIdOf, partnerIdOf } from "./resource-ids.js"
import { runUnitOfWork } from "./run-unit-of-work.js"
import { writeThenRead } from "./write-then-read.js"

/** A client credential with its secret, answered once: when it is issued and when its secret is rotated. */
export interface IssuedCredential {
  readonly client_id: string
  /** `pos_cs_…`; stored only as an Argon2id hash, never shown again. */
  readonly client_secret: string
  /** When this secret was made: the credential's creation, or the rotation that made it. */
  readonly created_at: string
}

/** A rotation's answer: the new secret, and until when the replaced one keeps working. */
export interface RotatedCredential extends IssuedCredential {
  /** The end of the replaced secret's grace period: `created_at` itself when it ended at once. */
  readonly previous_secret_valid_until: string
}

/** How long a replaced client secret keeps working after a rotation, by default: a day. */
export const DEFAULT_SECRET_GRACE_SECONDS = 86_400

// Admin operations are not a partner's requests: their events carry the partner they concern and no request.
const adminContext = (partnerId: string): AppendContext => ({
  partnerId,
  requestId: null,
  idempotencyKey: null,
  causationId: null,
  correlationId: null,
})

// The partner every credential operation is about must exist (its stream, read in the same unit of work).
const ensurePartner = (state: Partner.PartnerState, partnerId: PartnerId) =>
  state._tag === "Registered"
    ? Effect.void
    : Effect.fail(new ResourceNotFound({ resource: "partner", id: partnerId }))

// A credential command in a unit of work that also reads the partner's stream, so an unknown partner is LE0002
// (and a partner's credential is only ever written while the partner exists).
const onCredential = (partner: PartnerId, command: ClientCredential.CredentialCommand) =>
  runUnitOfWork(
    { partner: readOnly(partnerStream(partner)), credential: credentialStream(command.clientId) },
    (s) =>
      Effect.zipRight(
        ensurePartner(s.partner, partner),
        Effect.map(ClientCredential.decide(command, s.credential), (credential) => ({ credential })),
      ),
    adminContext(partner),
  )

/** Create partner (admin). */
export const createPartner = (input: { readonly name: string }) => {
  const partnerId = PartnerId.make(uuidV7())
  const command = Partner.RegisterPartner.make({ partnerId, name: input.name })
  return writeThenRead(
    runUnitOfWork(
      { partner: partnerStream(partnerId) },
      (s) => Effect.map(Partner.decide(command, s.partner), (partner) => ({ partner })),
      adminContext(partnerId),
    ),
    () => getPartner(partnerId),
  ).pipe(Effect.withSpan("partners.create"))
}

/** Get partner (admin); LE0002 when there is none with this id. */
export const getPartnerResource = (partnerId: string) =>
  getPartner(partnerId).pipe(Effect.withSpan("partners.get"))

/** List partners (admin): every partner, oldest first. */
export const listPartnerResources = (query: {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}) => listPartners(query).pipe(Effect.withSpan("partners.list"))

/**
 * Create client credential (admin): a fresh client id and secret for the partner; the secret is hashed
 * (Argon2id, before any transaction: it takes ~100 ms) and shown only in this answer. LE0002 unknown partner.
 */
export const issueCredential = (partnerId: string, input: { readonly name?: string | null | undefined }) =>
  Effect.gen(function* () {
    const partner = yield* partnerIdOf(partnerId)
    const clientId = ClientId.make(uuidV7())
    const secret = newClientSecret()
    const secretHash = yield* hashClientSecret(secret)
    const command = ClientCredential.IssueCredential.make({
      clientId,
      partnerId: partner,
      name: input.name ?? null,
      secretHash,
    })
    const credential = yield* writeThenRead(onCredential(partner, command), () =>
      getCredential(partner, clientId),
    )
    return {
      client_id: credential.client_id,
      client_secret: secret,
      created_at: credential.created_at,
    } satisfies IssuedCredential
  }).pipe(Effect.withSpan("partners.issueCredential"))

/** List client credentials (admin): the partner's, revoked ones included, never a secret. LE0002 unknown partner. */
export const listCredentialResources = (
  partnerId: string,
  query: { readonly limit?: number | undefined; readonly cursor?: string | undefined },
) =>
  Effect.gen(function* () {
    const partner = yield* getPartner(partnerId)
    return yield* listCredentials(partner.id, query)
  }).pipe(Effect.withSpan("partners.listCredentials"))

/**
 * Rotate a client secret (admin): a new secret, shown only here; the replaced one keeps working for
 * `gracePeriodSeconds` (default a day; 0 stops it at once). Tokens already issued keep working until they
 * expire. LE0002 unknown partner or client, LE0004 revoked client.
 */
export const rotateCredentialSecret = (
  partnerId: string,
  clientId: string,
  options: { readonly gracePeriodSeconds?: number | undefined } = {},
) =>
  Effect.gen(function* () {
    const partner = yield* partnerIdOf(partnerId)
    const client = yield* clientIdOf(clientId)
    const secret = newClientSecret()
    const secretHash = yield* hashClientSecret(secret)
    const gracePeriodSeconds = options.gracePeriodSeconds ?? DEFAULT_SECRET_GRACE_SECONDS
    const command = ClientCredential.RotateSecret.make({ clientId: client, secretHash, gracePeriodSeconds })
    const credential = yield* writeThenRead(onCredential(partner, command), () =>
      getCredential(partner, client),
    )
    // The rotation is the credential's latest change, so its updated_at is when this secret was made, and
    // the grace period counts from it (as the domain's RotateSecret does).
    const rotatedAt = Date.parse(credential.updated_at)
    return {
      client_id: credential.client_id,
      client_secret: secret,
      created_at: credential.updated_at,
      previous_secret_valid_until: new Date(rotatedAt + gracePeriodSeconds * 1000).toISOString(),
    } satisfies RotatedCredential
  }).pipe(Effect.withSpan("partners.rotateCredentialSecret"))

/**
 * Revoke a client credential (admin): for good, with every token it holds, in one transaction. A repeat is
 * LE0004; LE0002 unknown partner or client.
 */
export const revokeCredential = (partnerId: string, clientId: string) =>
  Effect.gen(function* () {
    const partner = yield* partnerIdOf(partnerId)
    const client = yield* clientIdOf(clientId)
    return yield* writeThenRead(
      Effect.zipLeft(
        onCredential(partner, ClientCredential.RevokeCredential.make({ clientId: client })),
        // After the credential's row is updated, and locked until commit: a concurrent token insert either
        // committed before and is revoked here, or waits on that lock and then finds the credential revoked.
        revokeClientTokens(client),
      ),
      () => getCredential(partner, client),
    )
  }).pipe(Effect.withSpan("partners.revokeCredential"))

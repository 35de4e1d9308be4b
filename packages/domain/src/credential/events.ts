import { Schema } from "effect"
import { eventCatalog } from "../shared/event-catalog.js"
import { ClientId, PartnerId } from "../shared/ids.js"
import { RecordedLabel } from "../shared/text.js"
import { SecretHash } from "./secret-hash.js"

/** A partner was given a client credential; its secret was shown once and is kept only as a hash. */
export class CredentialIssued extends Schema.TaggedClass<CredentialIssued>()("CredentialIssued", {
  clientId: ClientId,
  partnerId: PartnerId,
  name: Schema.NullOr(RecordedLabel),
  secretHash: SecretHash,
  at: Schema.DateTimeUtc,
}) {}

/** The credential got a new secret; the one it replaces stays valid until `previousValidUntil`. */
export class SecretRotated extends Schema.TaggedClass<SecretRotated>()("SecretRotated", {
  clientId: ClientId,
  secretHash: SecretHash,
  previousSecretHash: SecretHash,
  previousValidUntil: Schema.DateTimeUtc,
  at: Schema.DateTimeUtc,
}) {}

/** The credential was revoked for good, with every token it holds; no secret of it is accepted any more. */
export class CredentialRevoked extends Schema.TaggedClass<CredentialRevoked>()("CredentialRevoked", {
  clientId: ClientId,
  at: Schema.DateTimeUtc,
}) {}

/** Every event of a client credential's stream. */
export type CredentialEvent = CredentialIssued | SecretRotated | CredentialRevoked

/** How client credential events are stored and read back. */
export const credentialEvents = eventCatalog([CredentialIssued, SecretRotated, CredentialRevoked])

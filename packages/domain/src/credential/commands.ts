import { Schema } from "effect"
import { GracePeriodSeconds } from "../shared/grace-period.js"
import { ClientId, PartnerId } from "../shared/ids.js"
import { Label } from "../shared/text.js"
import { SecretHash } from "./secret-hash.js"

/** Issue a partner a client credential under a fresh client id, with the hash of its first secret. */
export class IssueCredential extends Schema.TaggedClass<IssueCredential>()("IssueCredential", {
  clientId: ClientId,
  partnerId: PartnerId,
  name: Schema.NullOr(Label),
  secretHash: SecretHash,
}) {}

/** Replace a credential's secret; the old one keeps working for the grace period, so clients can switch over. */
export class RotateSecret extends Schema.TaggedClass<RotateSecret>()("RotateSecret", {
  clientId: ClientId,
  secretHash: SecretHash,
  gracePeriodSeconds: GracePeriodSeconds,
}) {}

/** Revoke a credential for good. */
export class RevokeCredential extends Schema.TaggedClass<RevokeCredential>()("RevokeCredential", {
  clientId: ClientId,
}) {}

/** Every command a client credential accepts. */
export type CredentialCommand = IssueCredential | RotateSecret | RevokeCredential

import { invariant, unknownEvent } from "../shared/decider.js"
import type { CredentialEvent } from "./events.js"
import type { CredentialState, IssuedCredential } from "./state.js"

const active = (state: CredentialState, event: CredentialEvent): IssuedCredential => {
  invariant(state._tag === "Issued", `${event._tag} before CredentialIssued`)
  invariant(state.clientId === event.clientId, `${event._tag} of another credential in the stream`)
  invariant(state.status === "active", `${event._tag} on a revoked credential`)
  return state
}

/** Applies one event to a client credential's state. */
export const evolve = (state: CredentialState, event: CredentialEvent): CredentialState => {
  switch (event._tag) {
    case "CredentialIssued":
      invariant(state._tag === "Unissued", "CredentialIssued twice in one stream")
      return {
        _tag: "Issued",
        clientId: event.clientId,
        partnerId: event.partnerId,
        name: event.name,
        secretHash: event.secretHash,
        previousSecret: null,
        status: "active",
        createdAt: event.at,
        updatedAt: event.at,
        version: 1,
      }
    case "SecretRotated": {
      const credential = active(state, event)
      return {
        ...credential,
        secretHash: event.secretHash,
        previousSecret: { secretHash: event.previousSecretHash, validUntil: event.previousValidUntil },
        updatedAt: event.at,
        version: credential.version + 1,
      }
    }
    case "CredentialRevoked": {
      const credential = active(state, event)
      return { ...credential, status: "revoked", updatedAt: event.at, version: credential.version + 1 }
    }
    default:
      return unknownEvent(event)
  }
}

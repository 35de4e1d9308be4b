import { DateTime, Effect } from "effect"
import { AlreadyClosed, ResourceNotFound } from "../errors/business-errors.js"
import { InvariantViolation, unknownCommand, validatedElsewhere } from "../shared/decider.js"
import type { ClientId } from "../shared/ids.js"
import type { CredentialCommand } from "./commands.js"
import { type CredentialEvent, CredentialIssued, CredentialRevoked, SecretRotated } from "./events.js"
import type { CredentialState, IssuedCredential } from "./state.js"

/** The errors a credential command can be refused with: LE0002 when unknown, LE0004 when revoked. */
export type CredentialError = ResourceNotFound | AlreadyClosed

const active = (
  state: CredentialState,
  clientId: ClientId,
): Effect.Effect<IssuedCredential, CredentialError> => {
  if (state._tag !== "Issued") return Effect.fail(new ResourceNotFound({ resource: "client", id: clientId }))
  if (state.status === "revoked") return Effect.fail(new AlreadyClosed({ resource: "client", id: clientId }))
  return Effect.succeed(state)
}

/** Decides a client credential command against the credential's current state. */
export const decide = (
  command: CredentialCommand,
  state: CredentialState,
): Effect.Effect<ReadonlyArray<CredentialEvent>, CredentialError> =>
  Effect.gen(function* () {
    // The stream belongs to one credential; a command for another credential reaching it is a routing bug.
    if (state._tag === "Issued" && state.clientId !== command.clientId) {
      return yield* Effect.die(new InvariantViolation(`${command._tag} for another credential`))
    }
    const at = yield* DateTime.now
    switch (command._tag) {
      case "IssueCredential": {
        // Client ids are fresh UUID v7s minted per request, so a second issue of one id is a bug, not a retry.
        if (state._tag === "Issued")
          return yield* Effect.die(new InvariantViolation("client id already issued"))
        const { clientId, partnerId, name, secretHash } = command
        return [CredentialIssued.make({ clientId, partnerId, name, secretHash, at }, validatedElsewhere)]
      }
      case "RotateSecret": {
        const credential = yield* active(state, command.clientId)
        return [
          SecretRotated.make(
            {
              clientId: command.clientId,
              secretHash: command.secretHash,
              previousSecretHash: credential.secretHash,
              previousValidUntil: DateTime.add(at, { seconds: command.gracePeriodSeconds }),
              at,
            },
            validatedElsewhere,
          ),
        ]
      }
      case "RevokeCredential": {
        yield* active(state, command.clientId)
        return [CredentialRevoked.make({ clientId: command.clientId, at }, validatedElsewhere)]
      }
      default:
        return yield* unknownCommand(command)
    }
  })

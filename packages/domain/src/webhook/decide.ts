import { DateTime, Effect } from "effect"
import { LimitReached, ResourceNotFound } from "../errors/business-errors.js"
import { InvalidParams } from "../errors/request-errors.js"
import { InvariantViolation, unknownCommand, validatedElsewhere } from "../shared/decider.js"
import type { WebhookEndpointId } from "../shared/ids.js"
import { MAX_WEBHOOK_ENDPOINTS, type WebhookEndpointCommand } from "./commands.js"
import { normalizeEventTypes } from "./event-types.js"
import {
  WebhookEndpointCreated,
  WebhookEndpointDeleted,
  WebhookEndpointDisabled,
  type WebhookEndpointEvent,
  WebhookEndpointUpdated,
  WebhookSecretRotated,
} from "./events.js"
import type { LiveEndpoint, WebhookEndpointState } from "./state.js"
import { targetProblem } from "./url.js"

/**
 * The errors an endpoint command can be refused with: LE0002 when unknown or deleted, GH1006 for a bad target,
 * LE0007 for a partner that has as many endpoints as it may.
 */
export type WebhookEndpointError = ResourceNotFound | InvalidParams | LimitReached

const live = (
  state: WebhookEndpointState,
  endpointId: WebhookEndpointId,
): Effect.Effect<LiveEndpoint, ResourceNotFound> =>
  state._tag === "Live"
    ? Effect.succeed(state)
    : Effect.fail(new ResourceNotFound({ resource: "webhook endpoint", id: endpointId }))

const checkTarget = (url: string, allowPrivateTargets: boolean): Effect.Effect<void, InvalidParams> => {
  const problem = targetProblem(url, { allowPrivateTargets })
  return problem === null ? Effect.void : Effect.fail(new InvalidParams({ field: "url", problem }))
}

const sameTypes = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((type, index) => type === b[index])

/** Decides a webhook endpoint command against the endpoint's current state. */
export const decide = (
  command: WebhookEndpointCommand,
  state: WebhookEndpointState,
): Effect.Effect<ReadonlyArray<WebhookEndpointEvent>, WebhookEndpointError> =>
  Effect.gen(function* () {
    const { endpointId } = command
    // The stream belongs to one endpoint; a command for another endpoint reaching it is a routing bug.
    if (state._tag !== "Absent" && state.endpointId !== endpointId) {
      return yield* Effect.die(new InvariantViolation(`${command._tag} for another endpoint`))
    }
    const at = yield* DateTime.now
    switch (command._tag) {
      case "CreateEndpoint": {
        // Ids are fresh UUID v7s minted per request, so a second creation of one id is a bug, not a retry.
        if (state._tag !== "Absent")
          return yield* Effect.die(new InvariantViolation("endpoint id already used"))
        yield* checkTarget(command.url, command.allowPrivateTargets)
        if (command.endpointsOfPartner >= MAX_WEBHOOK_ENDPOINTS) {
          return yield* Effect.fail(
            new LimitReached({ resource: "webhook endpoints", limit: MAX_WEBHOOK_ENDPOINTS }),
          )
        }
        const { partnerId, url, description, enabled, secretId } = command
        const eventTypes = normalizeEventTypes(command.eventTypes)
        return [
          WebhookEndpointCreated.make(
            {
              endpointId,
              partnerId,
              url,
              eventTypes,
              description,
              enabled,
              secretId,
              at,
            },
            validatedElsewhere,
          ),
        ]
      }
      case "UpdateEndpoint": {
        const endpoint = yield* live(state, endpointId)
        if (command.url !== undefined) yield* checkTarget(command.url, command.allowPrivateTargets)
        const url = command.url ?? endpoint.url
        const eventTypes =
          command.eventTypes === undefined ? endpoint.eventTypes : normalizeEventTypes(command.eventTypes)
        const description = command.description === undefined ? endpoint.description : command.description
        const enabled = command.enabled ?? endpoint.enabled
        const unchanged =
          url === endpoint.url &&
          sameTypes(eventTypes, endpoint.eventTypes) &&
          description === endpoint.description &&
          enabled === endpoint.enabled
        if (unchanged) return []
        return [
          WebhookEndpointUpdated.make(
            { endpointId, url, eventTypes, description, enabled, at },
            validatedElsewhere,
          ),
        ]
      }
      case "RotateEndpointSecret": {
        const endpoint = yield* live(state, endpointId)
        return [
          WebhookSecretRotated.make(
            {
              endpointId,
              secretId: command.secretId,
              previousSecretId: endpoint.secretId,
              previousValidUntil: DateTime.add(at, { seconds: command.gracePeriodSeconds }),
              at,
            },
            validatedElsewhere,
          ),
        ]
      }
      case "DisableEndpoint": {
        const endpoint = yield* live(state, endpointId)
        // Deliveries racing each other may each decide to disable; only the first changes anything.
        if (!endpoint.enabled) return []
        return [WebhookEndpointDisabled.make({ endpointId, reason: command.reason, at }, validatedElsewhere)]
      }
      case "DeleteEndpoint": {
        yield* live(state, endpointId)
        return [WebhookEndpointDeleted.make({ endpointId, at }, validatedElsewhere)]
      }
      default:
        return yield* unknownCommand(command)
    }
  })

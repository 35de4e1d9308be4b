import {
  InvalidParams,
  SigningSecretId,
  WebhookEndpoint,
  WebhookEndpointId,
  type WebhookEndpointResource,
  type WebhookEndpointWithSecretResource,
} from "@points/domain"
import { Effect } from "effect"
import { webhookStream } from "../event-store/stream-handle.js"
import { uuidV7 } from "../ids/uuid-v7.js"
import {
  countEndpointsForCreation,
  getWebhookEndpoint,
  listWebhookEndpoints,
  webhookEndpointRowOf,
} from "../projections/webhook-endpoints.js"
import { endPendingAttempts } from "../webhooks/disable-endpoint.js"
import { resolvedTargetRefusal } from "../webhooks/registration-target.js"
import { DEFAULT_SECRET_GRACE_SECONDS } from "./partners.js"
import { appendContextOf, type RequestContext } from "./request-context.js"
import { webhookEndpointIdOf } from "./resource-ids.js"
import { runUnitOfWork } from "./run-unit-of-work.js"
import { newSigningSecret, storeSigningSecret } from "./signing-secrets.js"
import { writeThenRead } from "./write-then-read.js"

/** The platform's setting for endpoint targets (WEBHOOK_ALLOW_PRIVATE_TARGETS): private and loopback allowed. */
export interface EndpointTargetPolicy {
  readonly allowPrivateTargets: boolean
}

/** What Create endpoint takes, as the contract decoded it. */
export interface CreateEndpointInput {
  readonly url: WebhookEndpoint.WebhookUrl
  readonly event_types?: ReadonlyArray<WebhookEndpoint.PublicEventType> | undefined
  readonly description?: string | null | undefined
  readonly enabled?: boolean | undefined
}

/** What Update endpoint takes: only the fields to change; a null description clears it. */
export interface UpdateEndpointInput {
  readonly url?: WebhookEndpoint.WebhookUrl | undefined
  readonly event_types?: ReadonlyArray<WebhookEndpoint.PublicEventType> | undefined
  readonly description?: string | null | undefined
  readonly enabled?: boolean | undefined
}

// The refusal of a target whose name resolves where deliveries may not go, or null. Only an address the
// domain's own rules accept (https, no private literal) is resolved: the domain refuses the others first.
const resolvedTargetProblem = (url: WebhookEndpoint.WebhookUrl, policy: EndpointTargetPolicy) =>
  WebhookEndpoint.targetProblem(url, policy) !== null
    ? Effect.succeed(null)
    : Effect.map(resolvedTargetRefusal(url, policy.allowPrivateTargets), (refused) =>
        refused === null
          ? null
          : new InvalidParams({
              field: "url",
              problem: "must not name a host that resolves to a private, loopback or link-local address",
            }),
      )

const onEndpoint = (context: RequestContext, command: WebhookEndpoint.WebhookEndpointCommand) =>
  runUnitOfWork(
    { endpoint: webhookStream(command.endpointId) },
    (s) => Effect.map(WebhookEndpoint.decide(command, s.endpoint), (endpoint) => ({ endpoint })),
    appendContextOf(context),
  )

// The secret's value is stored in the unit of work's transaction, after the events that reference it; the
// command is made in that transaction too.
const withNewSecret = <E, R>(
  context: RequestContext,
  endpointId: WebhookEndpointId,
  command: (secretId: SigningSecretId) => Effect.Effect<WebhookEndpoint.WebhookEndpointCommand, E, R>,
) =>
  Effect.gen(function* () {
    const secretId = SigningSecretId.make(uuidV7())
    const secret = newSigningSecret()
    const endpoint = yield* writeThenRead(
      Effect.zipRight(
        Effect.flatMap(command(secretId), (made) => onEndpoint(context, made)),
        storeSigningSecret({ id: secretId, partnerId: context.partnerId, endpointId, secret }),
      ),
      () => getWebhookEndpoint(context.partnerId, endpointId),
    )
    return { ...endpoint, secret } satisfies WebhookEndpointWithSecretResource
  })

// The creation itself, once the target's name was resolved and allowed.
const createResolvedEndpoint = (
  context: RequestContext,
  input: CreateEndpointInput,
  policy: EndpointTargetPolicy,
) => {
  const endpointId = WebhookEndpointId.make(uuidV7())
  return withNewSecret(context, endpointId, (secretId) =>
    Effect.map(countEndpointsForCreation(context.partnerId), (endpointsOfPartner) =>
      WebhookEndpoint.CreateEndpoint.make({
        endpointId,
        partnerId: context.partnerId,
        url: input.url,
        eventTypes: input.event_types ?? [],
        description: input.description ?? null,
        enabled: input.enabled ?? true,
        secretId,
        allowPrivateTargets: policy.allowPrivateTargets,
        endpointsOfPartner,
      }),
    ),
  )
}

/**
 * Create webhook endpoint, in two steps: the target's host name is resolved first (at most
 * TARGET_LOOKUP_TIMEOUT), outside any transaction, so that no database connection waits on DNS; then the
 * answered creation registers the endpoint (every type when `event_types` is empty or absent, enabled unless
 * told otherwise) with a fresh `whsec_` secret, answered only here and on rotation. GH1006 naming `url` for
 * plain http or a private, loopback or link-local target, literal or resolved (a name that does not resolve
 * is accepted), unless the policy allows them; LE0007 when the partner has MAX_WEBHOOK_ENDPOINTS already.
 */
export const webhookEndpointCreation = (input: CreateEndpointInput, policy: EndpointTargetPolicy) =>
  Effect.map(
    resolvedTargetProblem(input.url, policy),
    (refusal) => (context: RequestContext) =>
      Effect.zipRight(
        refusal === null ? Effect.void : Effect.fail(refusal),
        createResolvedEndpoint(context, input, policy),
      ).pipe(Effect.withSpan("webhooks.createEndpoint")),
  )

/** Create webhook endpoint in one step (`webhookEndpointCreation`, then its creation): not for a transaction. */
export const createWebhookEndpoint = (
  context: RequestContext,
  input: CreateEndpointInput,
  policy: EndpointTargetPolicy,
) => Effect.flatMap(webhookEndpointCreation(input, policy), (create) => create(context))

/** Get webhook endpoint, never its secret; LE0002 when the partner has none with this id. */
export const getWebhookEndpointResource = (context: RequestContext, endpointId: string) =>
  getWebhookEndpoint(context.partnerId, endpointId).pipe(Effect.withSpan("webhooks.getEndpoint"))

/** List webhook endpoints: a page of the partner's, oldest first, never a secret. */
export const listWebhookEndpointResources = (
  context: RequestContext,
  query: { readonly limit?: number | undefined; readonly cursor?: string | undefined },
) => listWebhookEndpoints(context.partnerId, query).pipe(Effect.withSpan("webhooks.listEndpoints"))

/**
 * Update webhook endpoint: changes the fields given (a null description clears it; enabling clears the
 * platform's reason for disabling; disabling ends its pending attempts as failed, in the same transaction).
 * Nothing given, nothing changes. LE0002 unknown; GH1006 for a bad target, literal or resolved as on create
 * (a new `url`'s host is resolved before the write, not in its transaction).
 */
export const updateWebhookEndpoint = (
  context: RequestContext,
  endpointId: string,
  input: UpdateEndpointInput,
  policy: EndpointTargetPolicy,
) =>
  Effect.gen(function* () {
    const id = yield* webhookEndpointIdOf(endpointId)
    const refusal = input.url === undefined ? null : yield* resolvedTargetProblem(input.url, policy)
    if (refusal !== null) return yield* Effect.fail(refusal)
    const command = WebhookEndpoint.UpdateEndpoint.make({
      endpointId: id,
      allowPrivateTargets: policy.allowPrivateTargets,
      ...(input.url === undefined ? {} : { url: input.url }),
      ...(input.event_types === undefined ? {} : { eventTypes: input.event_types }),
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
    })
    // Ended with the disable itself, so that no pending attempt can be claimed once it commits, nor sent after
    // the endpoint is enabled again.
    const write =
      input.enabled === false
        ? Effect.zipLeft(onEndpoint(context, command), endPendingAttempts(id, "partner"))
        : onEndpoint(context, command)
    return yield* writeThenRead(write, () => getWebhookEndpoint(context.partnerId, id))
  }).pipe(Effect.withSpan("webhooks.updateEndpoint"))

/**
 * Rotate an endpoint's secret: a new `whsec_` secret, answered only here, signs from now on; the previous one
 * signs too for a day. Both values stay stored. LE0002 unknown.
 */
export const rotateWebhookEndpointSecret = (context: RequestContext, endpointId: string) =>
  Effect.flatMap(webhookEndpointIdOf(endpointId), (id) =>
    withNewSecret(context, id, (secretId) =>
      Effect.succeed(
        WebhookEndpoint.RotateEndpointSecret.make({
          endpointId: id,
          secretId,
          gracePeriodSeconds: DEFAULT_SECRET_GRACE_SECONDS,
        }),
      ),
    ),
  ).pipe(Effect.withSpan("webhooks.rotateSecret"))

/**
 * Delete webhook endpoint: answers the endpoint as it was when deleted; then it is gone (a repeat is LE0002)
 * and nothing more is delivered to it.
 */
export const removeWebhookEndpoint = (context: RequestContext, endpointId: string) =>
  Effect.gen(function* () {
    const id = yield* webhookEndpointIdOf(endpointId)
    // The state the deletion was decided on (the last attempt's, when the unit was retried).
    let deleted: WebhookEndpoint.WebhookEndpointState = WebhookEndpoint.absent
    yield* writeThenRead(
      runUnitOfWork(
        { endpoint: webhookStream(id) },
        (s) => {
          deleted = s.endpoint
          const command = WebhookEndpoint.DeleteEndpoint.make({ endpointId: id })
          return Effect.map(WebhookEndpoint.decide(command, s.endpoint), (endpoint) => ({ endpoint }))
        },
        appendContextOf(context),
      ),
      () => Effect.void,
    )
    const row = webhookEndpointRowOf(context.partnerId, deleted)
    if (row === null) return yield* Effect.dieMessage("a deleted endpoint had no state")
    return {
      id: row.id,
      url: row.url,
      event_types: row.event_types,
      description: row.description,
      enabled: row.enabled,
      disabled_reason: row.disabled_reason,
      created_at: row.created_at,
      updated_at: row.updated_at,
      version: row.version,
    } satisfies WebhookEndpointResource
  }).pipe(Effect.withSpan("webhooks.deleteEndpoint"))

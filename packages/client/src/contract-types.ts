import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type {
  CreateOrderBody,
  CreateUserBody,
  CreateWebhookEndpointBody,
  PointsApi,
  PointsMovementBody,
  ReplayBody,
  UpdateUserBody,
  UpdateWebhookEndpointBody,
} from "@points/http-api"

// The resource types come from the contract itself, so the client cannot drift from what the server answers.
type Groups = typeof PointsApi extends HttpApi.HttpApi<infer _Id, infer G, infer _E, infer _R> ? G : never
type EndpointOf<Group extends string, Name extends string> = HttpApiEndpoint.HttpApiEndpoint.WithName<
  HttpApiGroup.HttpApiGroup.Endpoints<HttpApiGroup.HttpApiGroup.WithName<Groups, Group>>,
  Name
>
type SuccessOf<Group extends string, Name extends string> = HttpApiEndpoint.HttpApiEndpoint.Success<
  EndpointOf<Group, Name>
>

/** A user, as Get user answers it. */
export type User = SuccessOf<"users", "getUser">
/** A user's points account. */
export type PointsAccount = SuccessOf<"users", "getPointsAccount">
/** A points transaction (add, subtract, order debit or refund). */
export type Transaction = SuccessOf<"points", "getTransaction">
/** An order paid in points. */
export type Order = SuccessOf<"orders", "getOrder">
/** A public event, as `/api/events` lists it and a webhook carries it: `{id, type, timestamp, data}`. */
export type PublicEvent = SuccessOf<"events", "getEvent">
/** A webhook endpoint (without its signing secret). */
export type WebhookEndpoint = SuccessOf<"webhookEndpoints", "getWebhookEndpoint">
/** A webhook endpoint with its signing secret (`whsec_…`): what create and rotate-secret answer, once. */
export type WebhookEndpointWithSecret = SuccessOf<"webhookEndpoints", "rotateWebhookEndpointSecret">
/** One delivery attempt of a webhook. */
export type WebhookDelivery = SuccessOf<"webhookDeliveries", "listDeliveries">["data"][number]
/** The answer to a replay: how many deliveries it scheduled. */
export type ReplayResult = SuccessOf<"webhookDeliveries", "replay">

/** One page of a list and the cursor of the next (null on the last). */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly next_cursor: string | null
}

/** Body of Create user. */
export type CreateUserInput = typeof CreateUserBody.Encoded
/** Body of Update user: only the fields to change. */
export type UpdateUserInput = typeof UpdateUserBody.Encoded
/** The transaction of Add points and Subtract points: `user_id`, `amount`, `reference_id`, `description?`. */
export type PointsMovementInput = (typeof PointsMovementBody.Encoded)["transaction"]
/** Body of Create order. */
export type CreateOrderInput = typeof CreateOrderBody.Encoded
/** Body of Create webhook endpoint; no `event_types` (or none listed) subscribes to every type. */
export type CreateWebhookEndpointInput = typeof CreateWebhookEndpointBody.Encoded
/** Body of Update webhook endpoint: only the fields to change; a null `description` clears it. */
export type UpdateWebhookEndpointInput = typeof UpdateWebhookEndpointBody.Encoded
/** Body of Replay: `event_ids`, or `since` and/or `until` (ISO-8601). */
export type ReplayInput = typeof ReplayBody.Encoded

/** The paging parameters of every list: `limit` 1..100 (default 20), `cursor` from the previous page. */
export interface PageQuery {
  readonly limit?: number
  readonly cursor?: string
}

/** Filters of Find users. */
export interface FindUsersQuery extends PageQuery {
  readonly partner_user_id?: string
}

/** Filters of Find transactions; `reference_id` is how a pending outcome is reconciled. */
export interface FindTransactionsQuery extends PageQuery {
  readonly reference_id?: string
  readonly user_id?: string
}

/** Filters of Find orders; `reference_id` is how a pending outcome is reconciled. */
export interface FindOrdersQuery extends PageQuery {
  readonly reference_id?: string
  readonly user_id?: string
  readonly status?: Order["status"]
}

/** Filters of List events. */
export interface ListEventsQuery extends PageQuery {
  readonly type?: PublicEvent["type"]
  /** ISO-8601 with a zone: only events that happened at or after it. */
  readonly since?: string
}

/** Options of every POST. */
export interface WriteOptions {
  /**
   * The Idempotency-Key to send (1..255 printable ASCII characters), e.g. your own id of the operation.
   * Default: a fresh UUID, fixed when the method is called, so every retry (and every run of the returned
   * effect) carries the same one.
   */
  readonly idempotencyKey?: string
}

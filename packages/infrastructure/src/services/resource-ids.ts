import {
  ClientId,
  isUuidV7,
  OrderId,
  PartnerId,
  type ResourceKind,
  ResourceNotFound,
  UserId,
  WebhookEndpointId,
} from "@points/domain"
import { Effect } from "effect"

// Ids arrive as plain strings from paths and bodies. Every id the platform issues is a lowercase UUID v7, so
// anything else names no resource: LE0002 for it, like an id of another partner.
const idOf =
  <B>(resource: ResourceKind, make: (id: string) => B) =>
  (id: string): Effect.Effect<B, ResourceNotFound> =>
    isUuidV7(id) ? Effect.succeed(make(id)) : Effect.fail(new ResourceNotFound({ resource, id }))

/** A user id from a request; LE0002 naming the user unless it is a UUID v7. */
export const userIdOf = idOf("user", UserId.make)

/** An order id from a request; LE0002 naming the order unless it is a UUID v7. */
export const orderIdOf = idOf("order", OrderId.make)

/** A partner id from a request; LE0002 naming the partner unless it is a UUID v7. */
export const partnerIdOf = idOf("partner", PartnerId.make)

/** A client id from a request; LE0002 naming the client unless it is a UUID v7. */
export const clientIdOf = idOf("client", ClientId.make)

/** A webhook endpoint id from a request; LE0002 naming the endpoint unless it is a UUID v7. */
export const webhookEndpointIdOf = idOf("webhook endpoint", WebhookEndpointId.make)

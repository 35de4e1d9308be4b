import { Schema } from "effect"

// Ids are generated outside the domain (UUID v7, time-ordered) and carried into it by commands, so deciders
// stay deterministic. The domain only checks their shape.
const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const idOf = <const B extends string>(brand: B) =>
  Schema.String.pipe(
    Schema.pattern(uuidV7, { message: () => `must be a UUID v7` }),
    Schema.brand(brand),
    Schema.annotations({ identifier: brand, description: `${brand}: a lowercase UUID v7` }),
  )

/** A partner: the tenant every resource belongs to. */
export const PartnerId = idOf("PartnerId")
export type PartnerId = typeof PartnerId.Type

/** A client credential's public identifier (the OAuth `client_id`). */
export const ClientId = idOf("ClientId")
export type ClientId = typeof ClientId.Type

/** A partner's end user. */
export const UserId = idOf("UserId")
export type UserId = typeof UserId.Type

/** A points account (one per user). */
export const AccountId = idOf("AccountId")
export type AccountId = typeof AccountId.Type

/** One immutable movement on a points account. */
export const TransactionId = idOf("TransactionId")
export type TransactionId = typeof TransactionId.Type

/** An order paid in points. */
export const OrderId = idOf("OrderId")
export type OrderId = typeof OrderId.Type

/** A partner's webhook endpoint. */
export const WebhookEndpointId = idOf("WebhookEndpointId")
export type WebhookEndpointId = typeof WebhookEndpointId.Type

/** A domain event, also the public event id and the `webhook-id` of its deliveries. */
export const EventId = idOf("EventId")
export type EventId = typeof EventId.Type

/** The reference to a webhook endpoint's signing secret, whose value lives outside the immutable event log. */
export const SigningSecretId = idOf("SigningSecretId")
export type SigningSecretId = typeof SigningSecretId.Type

/** True when the string has the shape of a UUID v7 as the platform issues them. */
export const isUuidV7 = (value: string): boolean => uuidV7.test(value)

const uuidAnyCase = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const uuidLowerCase = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** True when the text is a UUID of any version in lower case, as every id the platform issues is written. */
export const isUuid = (value: string): boolean => uuidLowerCase.test(value)

/**
 * An id as the platform issues it: a UUID written in upper or mixed case is the same id in lower case (RFC 9562
 * section 4: UUIDs are case-insensitive on input, and some platforms print them in upper case); any other
 * text is left as it is, to be reported as the unknown id it is.
 */
export const idAsIssued = (text: string): string => (uuidAnyCase.test(text) ? text.toLowerCase() : text)

import { ClientCredential, Ledger, Order, Partner, Reference, User, WebhookEndpoint } from "@points/domain"

/** The kinds of stream, each holding one aggregate's events: the stream id is `<category>-<id>`. */
export const categories = {
  user: User.userEvents,
  ledger: Ledger.ledgerEvents,
  order: Order.orderEvents,
  reference: Reference.referenceEvents,
  partner: Partner.partnerEvents,
  credential: ClientCredential.credentialEvents,
  webhook: WebhookEndpoint.webhookEndpointEvents,
} as const

/** A stream category. */
export type Category = keyof typeof categories

/** A stream's id: its category and the aggregate's id. */
export type StreamId = `${Category}-${string}`

/** Names the stream of an aggregate: `streamId("ledger", userId)`. */
export const streamId = (category: Category, id: string): StreamId => `${category}-${id}`

/** The category a stream id belongs to. */
export const categoryOf = (id: StreamId): Category => id.slice(0, id.indexOf("-")) as Category

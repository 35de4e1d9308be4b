import type { EventCatalog } from "@points/domain"
import {
  ClientCredential,
  type Decider,
  Ledger,
  Order,
  Partner,
  Reference,
  User,
  WebhookEndpoint,
} from "@points/domain"
import type { Schema } from "effect"
import { type StreamId, streamId } from "./stream-id.js"

/** One aggregate's stream: where it lives, how to decide on it, how its events are stored. */
export interface StreamHandle<Command, Event, State, Err> {
  readonly streamId: StreamId
  readonly decider: Decider<Command, Event, State, Err>
  readonly catalog: EventCatalog<Event>
  /**
   * "read" when a unit of work only reads the stream (it is locked FOR SHARE at load, so writers of it wait
   * for the unit to finish); absent, the unit may write it (locked FOR UPDATE at load).
   */
  readonly access?: "read"
  /** How the unit of work keeps the state beside the stream, to load it without folding every event. */
  readonly snapshot?: StateSnapshot<State>
}

/** A stream's snapshot format: its name (stored with it; another name is ignored) and its JSON schema. */
export interface StateSnapshot<State> {
  readonly name: string
  readonly schema: Schema.Schema<State, unknown>
}

// biome-ignore lint/suspicious/noExplicitAny: a handle of any aggregate, as a constraint for the unit of work.
export type AnyStreamHandle = StreamHandle<any, any, any, any>

/** The same stream, marked as only read by the unit of work it is handed to (see StreamHandle.access). */
export const readOnly = <H extends AnyStreamHandle>(handle: H): H & { readonly access: "read" } => ({
  ...handle,
  access: "read",
})

const userSnapshot: StateSnapshot<User.UserState> = {
  name: User.USER_SNAPSHOT,
  schema: User.UserStateSnapshot as Schema.Schema<User.UserState, unknown>,
}

const ledgerSnapshot: StateSnapshot<Ledger.LedgerState> = {
  name: Ledger.LEDGER_SNAPSHOT,
  schema: Ledger.LedgerStateSnapshot as Schema.Schema<Ledger.LedgerState, unknown>,
}

/** A user's stream. */
export const userStream = (userId: string) =>
  ({
    streamId: streamId("user", userId),
    decider: User.decider,
    catalog: User.userEvents,
    snapshot: userSnapshot,
  }) as const

/** A user's points account stream (keyed by the user: one account per user). */
export const ledgerStream = (userId: string) =>
  ({
    streamId: streamId("ledger", userId),
    decider: Ledger.decider,
    catalog: Ledger.ledgerEvents,
    snapshot: ledgerSnapshot,
  }) as const

/** An order's stream. */
export const orderStream = (orderId: string) =>
  ({ streamId: streamId("order", orderId), decider: Order.decider, catalog: Order.orderEvents }) as const

/** The reservation of one `reference_id` of one kind for one partner. */
export const referenceStream = (partnerId: string, kind: string, referenceId: string) =>
  ({
    streamId: streamId("reference", `${partnerId}:${kind}:${referenceId}`),
    decider: Reference.decider,
    catalog: Reference.referenceEvents,
  }) as const

/** A partner's stream. */
export const partnerStream = (partnerId: string) =>
  ({
    streamId: streamId("partner", partnerId),
    decider: Partner.decider,
    catalog: Partner.partnerEvents,
  }) as const

/** A client credential's stream. */
export const credentialStream = (clientId: string) =>
  ({
    streamId: streamId("credential", clientId),
    decider: ClientCredential.decider,
    catalog: ClientCredential.credentialEvents,
  }) as const

/** A webhook endpoint's stream. */
export const webhookStream = (endpointId: string) =>
  ({
    streamId: streamId("webhook", endpointId),
    decider: WebhookEndpoint.decider,
    catalog: WebhookEndpoint.webhookEndpointEvents,
  }) as const

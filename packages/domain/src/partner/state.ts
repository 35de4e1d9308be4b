import type { DateTime } from "effect"
import type { PartnerId } from "../shared/ids.js"

/** A partner that exists, as its stream describes it. */
export interface RegisteredPartner {
  readonly _tag: "Registered"
  readonly partnerId: PartnerId
  readonly name: string
  readonly createdAt: DateTime.Utc
}

/** The state of a partner's stream: nothing yet, or a registered partner. */
export type PartnerState = { readonly _tag: "Unregistered" } | RegisteredPartner

/** The state before the first event. */
export const unregistered: PartnerState = { _tag: "Unregistered" }

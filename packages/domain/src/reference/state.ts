import type { DateTime } from "effect"
import type { ReferenceKind } from "../errors/business-errors.js"
import type { OrderId, PartnerId, TransactionId } from "../shared/ids.js"
import type { ReferenceId } from "../shared/text.js"

/** A reference id taken by a record. */
export interface ReservedReference {
  readonly _tag: "Reserved"
  readonly partnerId: PartnerId
  readonly kind: ReferenceKind
  readonly referenceId: ReferenceId
  readonly recordId: TransactionId | OrderId
  readonly reservedAt: DateTime.Utc
}

/** The state of a reference id's stream: free, or taken by a record. */
export type ReferenceState = { readonly _tag: "Unreserved" } | ReservedReference

/** The state before the first event. */
export const unreserved: ReferenceState = { _tag: "Unreserved" }

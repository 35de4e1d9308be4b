import { Schema } from "effect"
import { ReferenceKind } from "../errors/business-errors.js"
import { eventCatalog } from "../shared/event-catalog.js"
import { OrderId, PartnerId, TransactionId } from "../shared/ids.js"
import { ReferenceId } from "../shared/text.js"

/** A partner's reference id of one kind now belongs to a record; no other record of that kind may take it. */
export class ReferenceReserved extends Schema.TaggedClass<ReferenceReserved>()("ReferenceReserved", {
  partnerId: PartnerId,
  kind: ReferenceKind,
  referenceId: ReferenceId,
  recordId: Schema.Union(TransactionId, OrderId),
  at: Schema.DateTimeUtc,
}) {}

/** Every event of a reference id's stream. */
export type ReferenceEvent = ReferenceReserved

/** How reference id events are stored and read back. */
export const referenceEvents = eventCatalog([ReferenceReserved])

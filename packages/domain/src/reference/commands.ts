import { Schema } from "effect"
import { ReferenceKind } from "../errors/business-errors.js"
import { OrderId, PartnerId, TransactionId } from "../shared/ids.js"
import { ReferenceId } from "../shared/text.js"

/** Claim a partner's reference id of one kind for the transaction or order about to be recorded. */
export class ReserveReference extends Schema.TaggedClass<ReserveReference>()("ReserveReference", {
  partnerId: PartnerId,
  kind: ReferenceKind,
  referenceId: ReferenceId,
  /** The transaction or order that takes the reference id. */
  recordId: Schema.Union(TransactionId, OrderId),
}) {}

/** Every command a reference id accepts. */
export type ReferenceCommand = ReserveReference

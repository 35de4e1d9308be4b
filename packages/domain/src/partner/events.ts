import { Schema } from "effect"
import { eventCatalog } from "../shared/event-catalog.js"
import { PartnerId } from "../shared/ids.js"
import { RecordedLabel } from "../shared/text.js"

/** A partner (a tenant) was registered by the platform's administrators. */
export class PartnerRegistered extends Schema.TaggedClass<PartnerRegistered>()("PartnerRegistered", {
  partnerId: PartnerId,
  name: RecordedLabel,
  at: Schema.DateTimeUtc,
}) {}

/** Every event of a partner's stream. */
export type PartnerEvent = PartnerRegistered

/** How partner events are stored and read back. */
export const partnerEvents = eventCatalog([PartnerRegistered])

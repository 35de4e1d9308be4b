import { Schema } from "effect"
import { PartnerId } from "../shared/ids.js"
import { Label } from "../shared/text.js"

/** Register a partner under a fresh id. */
export class RegisterPartner extends Schema.TaggedClass<RegisterPartner>()("RegisterPartner", {
  partnerId: PartnerId,
  name: Label,
}) {}

/** Every command a partner accepts. */
export type PartnerCommand = RegisterPartner

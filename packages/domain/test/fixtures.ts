import { DateTime } from "effect"
import { PartnerId, UserId } from "../src/index.js"

// Fixed ids and instants so that expected events can be written out in full.
export const partnerId = PartnerId.make("01936b2e-0000-7000-8000-000000000001")
export const otherPartnerId = PartnerId.make("01936b2e-0000-7000-8000-000000000002")
export const userId = UserId.make("01936b2e-0000-7000-8000-0000000000a1")

/** The instant TestClock starts at in `it.effect`. */
export const epoch = DateTime.unsafeMake(0)

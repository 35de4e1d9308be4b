import { DateTime } from "effect"
import { uuidv7 as uuidV7 } from "uuidv7"
import { type AppendContext, ExpectedVersion } from "../src/index.js"

/** A fresh partner id (UUID v7), so tests never collide on a stream. */
export const newId = () => uuidV7()

/** The metadata of a test append for a partner. */
export const contextFor = (partnerId: string): AppendContext => ({
  partnerId,
  requestId: `req-${newId()}`,
  idempotencyKey: null,
  causationId: null,
  correlationId: null,
})

export const at = DateTime.unsafeMake(0)
export { ExpectedVersion }

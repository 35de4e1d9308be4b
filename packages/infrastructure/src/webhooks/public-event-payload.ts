import { Either } from "effect"
import { publicEventOf, type StoredPublicEvent } from "../projections/public-events.js"

/**
 * The body of a webhook: exactly the JSON of the public event `{id, type, timestamp, data}` as
 * `/api/events/{id}` answers it (`publicEventOf`: the same keys in the same order). Built once per attempt and
 * signed as sent, byte for byte. Left when the row is not a public event (a corrupt table): that attempt
 * fails saying so, and the dispatcher goes on with the others.
 */
export const webhookBodyOf = (event: StoredPublicEvent): Either.Either<string, string> =>
  Either.try({
    try: () => JSON.stringify(publicEventOf(event)),
    catch: () => `event ${event.id} is not a valid public event object`,
  })

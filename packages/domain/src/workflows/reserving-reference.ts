import { Effect } from "effect"
import * as Reference from "../reference/index.js"
import { atOneInstant } from "../shared/one-instant.js"

/** The events of a write that took a partner's reference id: the write's own, and the reservation's. */
export type ReservedEvents<Events> = Events & { readonly reference: ReadonlyArray<Reference.ReferenceEvent> }

/**
 * Decides a write that carries a partner's reference id (a points movement, an order): the reference id is
 * reserved first, so a retry of a write that was recorded is LE0006 (the client reads the outcome by
 * reference id) whatever happened to the user or the account since, and the write is decided only when the
 * reference id is free. Both at one instant: the reservation carries the write's time.
 */
export const reservingReference = <Events extends object, E, R>(
  reservation: Reference.ReserveReference,
  reference: Reference.ReferenceState,
  write: Effect.Effect<Events, E, R>,
): Effect.Effect<ReservedEvents<Events>, E | Reference.ReservationError, R> =>
  atOneInstant(
    Effect.gen(function* () {
      const reserved = yield* Reference.decide(reservation, reference)
      const events = yield* write
      return { ...events, reference: reserved }
    }),
  )

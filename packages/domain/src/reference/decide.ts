import { DateTime, Effect } from "effect"
import { DuplicateReferenceId } from "../errors/business-errors.js"
import { InvariantViolation, unknownCommand, validatedElsewhere } from "../shared/decider.js"
import type { ReferenceCommand } from "./commands.js"
import { type ReferenceEvent, ReferenceReserved } from "./events.js"
import type { ReferenceState } from "./state.js"

/** The errors a reference id command can be refused with. */
export type ReservationError = DuplicateReferenceId

/** Decides a reference id command against the reference id's current state. */
export const decide = (
  command: ReferenceCommand,
  state: ReferenceState,
): Effect.Effect<ReadonlyArray<ReferenceEvent>, ReservationError> =>
  Effect.gen(function* () {
    // One command so far: TypeScript narrows only a union to never, so the end is asserted by hand.
    if (command._tag !== "ReserveReference") return yield* unknownCommand(command as never)
    // The stream is one partner's reference id of one kind; a reservation of another reaching it is a
    // routing bug, not a duplicate.
    if (
      state._tag === "Reserved" &&
      (state.partnerId !== command.partnerId ||
        state.kind !== command.kind ||
        state.referenceId !== command.referenceId)
    ) {
      return yield* Effect.die(new InvariantViolation("a reservation of another reference id"))
    }
    // The first record keeps the reference id; the client reads it back with a GET by reference id.
    if (state._tag === "Reserved") {
      return yield* Effect.fail(
        new DuplicateReferenceId({ kind: command.kind, referenceId: command.referenceId }),
      )
    }
    const at = yield* DateTime.now
    return [ReferenceReserved.make({ ...command, at }, validatedElsewhere)]
  })

import { DateTime, Effect } from "effect"
import { InvariantViolation, unknownCommand, validatedElsewhere } from "../shared/decider.js"
import type { PartnerCommand } from "./commands.js"
import { type PartnerEvent, PartnerRegistered } from "./events.js"
import type { PartnerState } from "./state.js"

/** Decides a partner command against the partner's current state; a partner refuses nothing a client can fix. */
export const decide = (
  command: PartnerCommand,
  state: PartnerState,
): Effect.Effect<ReadonlyArray<PartnerEvent>> =>
  Effect.gen(function* () {
    const at = yield* DateTime.now
    switch (command._tag) {
      case "RegisterPartner": {
        // Ids are fresh UUID v7s minted per request, so a second registration of one id is a bug, not a retry.
        if (state._tag === "Registered")
          return yield* Effect.die(new InvariantViolation("partner id already registered"))
        return [
          PartnerRegistered.make(
            { partnerId: command.partnerId, name: command.name, at },
            validatedElsewhere,
          ),
        ]
      }
      default:
        // One command so far: TypeScript narrows only a union to never, so the end is asserted by hand.
        return yield* unknownCommand(command as never)
    }
  })

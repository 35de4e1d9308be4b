import { DateTime, Effect } from "effect"
import { AlreadyClosed, ResourceNotFound, UserBeingProcessed } from "../errors/business-errors.js"
import { InvariantViolation, unknownCommand, validatedElsewhere } from "../shared/decider.js"
import type { UserCommand } from "./commands.js"
import {
  PointsAccountLinked,
  UserActivated,
  UserClosed,
  UserDetailsChanged,
  type UserEvent,
  UserRegistered,
} from "./events.js"
import type { RegisteredUser, UserStanding, UserState } from "./state.js"

/** The errors a user command can be refused with. */
export type UserError = ResourceNotFound | UserBeingProcessed | AlreadyClosed

/**
 * The same rule for another aggregate that only knows the user's standing: LE0002 when unregistered,
 * LE0001 while processing, LE0004 when closed.
 */
export const ensureStandingWritable = (
  standing: UserStanding,
  userId: string,
): Effect.Effect<void, UserError> => {
  switch (standing) {
    case "unregistered":
      return Effect.fail(new ResourceNotFound({ resource: "user", id: userId }))
    case "processing":
      return Effect.fail(new UserBeingProcessed({ userId }))
    case "closed":
      return Effect.fail(new AlreadyClosed({ resource: "user", id: userId }))
    case "active":
      return Effect.void
  }
}

const existing = (state: UserState, userId: string): Effect.Effect<RegisteredUser, ResourceNotFound> =>
  state._tag === "Registered"
    ? Effect.succeed(state)
    : Effect.fail(new ResourceNotFound({ resource: "user", id: userId }))

/**
 * Checks that a user takes writes: it exists (LE0002), is not being processed (LE0001) and is not closed
 * (LE0004). Every write about a user (its own, its points, its orders) goes through this one rule.
 */
export const ensureWritable = (state: UserState, userId: string): Effect.Effect<RegisteredUser, UserError> =>
  Effect.flatMap(existing(state, userId), (user) =>
    Effect.as(ensureStandingWritable(user.status, userId), user),
  )

/** Decides a user command against the user's current state. */
export const decide = (
  command: UserCommand,
  state: UserState,
): Effect.Effect<ReadonlyArray<UserEvent>, UserError> =>
  Effect.gen(function* () {
    // The stream belongs to one user; a command for another user reaching it is a routing bug.
    if (state._tag === "Registered" && state.userId !== command.userId) {
      return yield* Effect.die(new InvariantViolation(`${command._tag} for another user`))
    }
    const at = yield* DateTime.now
    switch (command._tag) {
      case "RegisterUser": {
        // Ids are fresh UUID v7s minted per request, so a second registration of one id is a bug, not a retry.
        if (state._tag === "Registered")
          return yield* Effect.die(new InvariantViolation("user id already registered"))
        return [UserRegistered.make({ ...command, at }, validatedElsewhere)]
      }
      case "ActivateUser": {
        const user = yield* existing(state, command.userId)
        // Redelivered activations are harmless: only a user still processing changes.
        return user.status === "processing"
          ? [UserActivated.make({ userId: command.userId, at }, validatedElsewhere)]
          : []
      }
      case "UpdateUser": {
        const user = yield* ensureWritable(state, command.userId)
        const email = command.email ?? user.email
        const name = command.name === undefined ? user.name : command.name
        if (email === user.email && name === user.name) return []
        return [UserDetailsChanged.make({ userId: command.userId, email, name, at }, validatedElsewhere)]
      }
      case "LinkPointsAccount": {
        const user = yield* ensureWritable(state, command.userId)
        // The ledger opens one account per user, so a user that names one was read beside a ledger read just
        // before a concurrent opening committed: nothing here, and that unit's append of the ledger conflicts
        // (the stream exists now), so it runs again on what committed.
        if (user.pointsAccountId !== null) return []
        const { userId, accountId, openedAt } = command
        return [PointsAccountLinked.make({ userId, accountId, at: openedAt }, validatedElsewhere)]
      }
      case "CloseUser": {
        yield* ensureWritable(state, command.userId)
        return [UserClosed.make({ userId: command.userId, at }, validatedElsewhere)]
      }
      default:
        return yield* unknownCommand(command)
    }
  })

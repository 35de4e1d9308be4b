import { Effect } from "effect"
import * as Ledger from "../ledger/index.js"
import type { UserId } from "../shared/ids.js"
import { atOneInstant } from "../shared/one-instant.js"
import * as User from "../user/index.js"

/** What closing a user reads: the user's stream and their points account. */
export interface CloseUserState {
  readonly user: User.UserState
  readonly ledger: Ledger.LedgerState
}

/** The partner's request to close one of its users. */
export interface CloseUserInput {
  readonly userId: UserId
}

/** The events closing a user appends, per stream, in one transaction. */
export interface CloseUserEvents {
  readonly user: ReadonlyArray<User.UserEvent>
  readonly ledger: ReadonlyArray<Ledger.LedgerEvent>
}

/** Closes a user and, if they have one, their points account with them, at one instant. */
export const closeUser = (
  state: CloseUserState,
  input: CloseUserInput,
): Effect.Effect<CloseUserEvents, User.UserError | Ledger.LedgerError> =>
  atOneInstant(
    Effect.gen(function* () {
      const user = yield* User.decide(User.CloseUser.make({ userId: input.userId }), state.user)
      const ledger = yield* Ledger.decide(Ledger.CloseAccount.make({ userId: input.userId }), state.ledger)
      return { user, ledger }
    }),
  )

import { Effect } from "effect"
import * as Ledger from "../ledger/index.js"
import { validatedElsewhere } from "../shared/decider.js"
import * as User from "../user/index.js"

/** What a write that may open a user's points account reads: the user and their points account. */
export interface AccountHolderState {
  readonly user: User.UserState
  readonly ledger: Ledger.LedgerState
}

/** The events such a write appends, per stream, in one transaction. */
export interface AccountHolderEvents {
  readonly user: ReadonlyArray<User.UserEvent>
  readonly ledger: ReadonlyArray<Ledger.LedgerEvent>
}

/**
 * Decides a ledger command that may open the user's points account (Open points account, Add points) and,
 * when it does, names the account on the user (PointsAccountLinked): the user's resource shows its account
 * with a version that grew, as every change of a resource must.
 */
export const openAccountForUser = (
  state: AccountHolderState,
  command: Ledger.OpenAccount | Ledger.AddPoints,
): Effect.Effect<AccountHolderEvents, Ledger.LedgerError | User.UserError> =>
  Effect.gen(function* () {
    const ledger = yield* Ledger.decide(command, state.ledger)
    const opened = ledger.find((event) => event._tag === "AccountOpened")
    if (opened === undefined) return { user: [], ledger }
    const user = yield* User.decide(
      User.LinkPointsAccount.make(
        { userId: command.userId, accountId: opened.accountId, openedAt: opened.at },
        validatedElsewhere,
      ),
      state.user,
    )
    return { user, ledger }
  })

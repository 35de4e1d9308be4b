import { Effect, type Schema } from "effect"
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

// A ledger command's fields but the holder's standing, which the workflow reads from the user itself.
type WithoutHolder<Fields extends Schema.Struct.Fields> = Omit<Schema.Struct.Type<Fields>, "holder">

/** A write that may open the user's points account: Open points account, or Add points (the first opens one). */
export type AccountOpening =
  | WithoutHolder<typeof Ledger.OpenAccount.fields>
  | WithoutHolder<typeof Ledger.AddPoints.fields>

/**
 * Decides a write that may open the user's points account, with the holder's standing read from the user's
 * state, and when it opens the account names it on the user (PointsAccountLinked): the user's resource shows
 * its account with a version that grew, as every change of a resource must.
 */
export const openAccountForUser = (
  state: AccountHolderState,
  opening: AccountOpening,
): Effect.Effect<AccountHolderEvents, Ledger.LedgerError | User.UserError> =>
  Effect.gen(function* () {
    const holder = User.standingOf(state.user)
    const command =
      opening._tag === "OpenAccount"
        ? Ledger.OpenAccount.make({ ...opening, holder }, validatedElsewhere)
        : Ledger.AddPoints.make({ ...opening, holder }, validatedElsewhere)
    const ledger = yield* Ledger.decide(command, state.ledger)
    const opened = ledger.find((event) => event._tag === "AccountOpened")
    if (opened === undefined) return { user: [], ledger }
    const user = yield* User.decide(
      User.LinkPointsAccount.make(
        { userId: opening.userId, accountId: opened.accountId, openedAt: opened.at },
        validatedElsewhere,
      ),
      state.user,
    )
    return { user, ledger }
  })

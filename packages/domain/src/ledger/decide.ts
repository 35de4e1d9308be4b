import { DateTime, Effect } from "effect"
import {
  AlreadyClosed,
  InsufficientPoints,
  NoPointsAccount,
  PointsAccountConflict,
} from "../errors/business-errors.js"
import { InvariantViolation, unknownCommand, validatedElsewhere } from "../shared/decider.js"
import { type Points, PointsBalance, zeroBalance } from "../shared/points.js"
import { ensureStandingWritable, type UserError } from "../user/decide.js"
import type { UserStanding } from "../user/state.js"
import type { LedgerCommand } from "./commands.js"
import {
  AccountClosed,
  AccountOpened,
  type LedgerEvent,
  OrderDebited,
  OrderRefunded,
  PointsAdded,
  PointsSubtracted,
} from "./events.js"
import type { LedgerState, PointsAccount } from "./state.js"

/** The errors a points account command can be refused with. */
export type LedgerError =
  | UserError
  | PointsAccountConflict
  | AlreadyClosed
  | NoPointsAccount
  | InsufficientPoints

/** The balance after crediting an amount. */
const credited = (balance: PointsBalance, amount: Points): Effect.Effect<PointsBalance> => {
  const after = balance + amount
  // Beyond 2^53 integers lose precision; no published error covers a balance that large, so it is a defect.
  return after <= Number.MAX_SAFE_INTEGER
    ? Effect.succeed(PointsBalance.make(after))
    : Effect.die(new InvariantViolation(`a balance of ${after} points is beyond the largest safe integer`))
}

/** The balance after debiting an amount, refused (LE2002) when it would go below zero. */
const debited = (account: PointsAccount, amount: Points): Effect.Effect<PointsBalance, InsufficientPoints> =>
  amount > account.balance
    ? Effect.fail(new InsufficientPoints({ balance: account.balance, requested: amount }))
    : Effect.succeed(PointsBalance.make(account.balance - amount))

/** The open account a debit is written off, refused (LE2001) when there is none or it closed. */
const openAccount = (state: LedgerState, userId: string): Effect.Effect<PointsAccount, NoPointsAccount> =>
  state._tag === "Open" ? Effect.succeed(state) : Effect.fail(new NoPointsAccount({ userId }))

/**
 * A debit (subtract, order) needs a writable user, except that a closed user's account closed with it:
 * DESIGN.md section 3 answers that as "no account to write off" (LE2001), not as "already closed".
 */
const ensureDebitable = (holder: UserStanding, userId: string) =>
  holder === "closed" ? Effect.fail(new NoPointsAccount({ userId })) : ensureStandingWritable(holder, userId)

/** Decides a points account command against the account's current state. */
export const decide = (
  command: LedgerCommand,
  state: LedgerState,
): Effect.Effect<ReadonlyArray<LedgerEvent>, LedgerError> =>
  Effect.gen(function* () {
    // The stream belongs to one user; a command for another user reaching it is a routing bug.
    if (state._tag !== "NoAccount" && state.userId !== command.userId) {
      return yield* Effect.die(new InvariantViolation(`${command._tag} for another user's account`))
    }
    const at = yield* DateTime.now
    switch (command._tag) {
      case "OpenAccount": {
        yield* ensureStandingWritable(command.holder, command.userId)
        if (state._tag !== "NoAccount") {
          return yield* Effect.fail(new PointsAccountConflict({ reason: "AccountAlreadyOpen" }))
        }
        return [
          AccountOpened.make(
            { accountId: command.accountId, userId: command.userId, at },
            validatedElsewhere,
          ),
        ]
      }
      case "AddPoints": {
        yield* ensureStandingWritable(command.holder, command.userId)
        if (state._tag === "Closed") {
          return yield* Effect.fail(new AlreadyClosed({ resource: "points account", id: state.accountId }))
        }
        const opening = state._tag === "NoAccount"
        const accountId = opening ? command.accountId : state.accountId
        const balanceAfter = yield* credited(opening ? zeroBalance : state.balance, command.amount)
        const added = PointsAdded.make(
          {
            transactionId: command.transactionId,
            accountId,
            userId: command.userId,
            amount: command.amount,
            balanceAfter,
            referenceId: command.referenceId,
            description: command.description,
            at,
          },
          validatedElsewhere,
        )
        return opening
          ? [AccountOpened.make({ accountId, userId: command.userId, at }, validatedElsewhere), added]
          : [added]
      }
      case "SubtractPoints": {
        yield* ensureDebitable(command.holder, command.userId)
        const account = yield* openAccount(state, command.userId)
        const balanceAfter = yield* debited(account, command.amount)
        return [
          PointsSubtracted.make(
            {
              transactionId: command.transactionId,
              accountId: account.accountId,
              userId: command.userId,
              amount: command.amount,
              balanceAfter,
              referenceId: command.referenceId,
              description: command.description,
              at,
            },
            validatedElsewhere,
          ),
        ]
      }
      case "DebitForOrder": {
        // Once per order: the placeOrder workflow debits only while placing a new order stream.
        yield* ensureDebitable(command.holder, command.userId)
        const account = yield* openAccount(state, command.userId)
        const balanceAfter = yield* debited(account, command.amount)
        return [
          OrderDebited.make(
            {
              transactionId: command.transactionId,
              accountId: account.accountId,
              userId: command.userId,
              orderId: command.orderId,
              amount: command.amount,
              balanceAfter,
              referenceId: command.referenceId,
              at,
            },
            validatedElsewhere,
          ),
        ]
      }
      case "RefundOrder": {
        // The order refunds itself at most once, for exactly its debit: failed and cancelled are exclusive final
        // states, and the refund is appended with that transition. The account checks only what it can know:
        // a refund follows debits of this very account, so one beyond them is a bug, not a client mistake.
        // Accepted on a closed account too: points taken for an order that never happened go back.
        if (state._tag === "NoAccount") {
          return yield* Effect.die(
            new InvariantViolation(`refund of order ${command.orderId} without an account`),
          )
        }
        if (command.amount > state.outstandingOrderDebits) {
          return yield* Effect.die(
            new InvariantViolation(
              `a refund larger than the outstanding order debits: ${command.amount} points for order ` +
                `${command.orderId}, ${state.outstandingOrderDebits} outstanding`,
            ),
          )
        }
        const balanceAfter = yield* credited(state.balance, command.amount)
        return [
          OrderRefunded.make(
            {
              transactionId: command.transactionId,
              accountId: state.accountId,
              userId: command.userId,
              orderId: command.orderId,
              amount: command.amount,
              balanceAfter,
              referenceId: command.referenceId,
              at,
            },
            validatedElsewhere,
          ),
        ]
      }
      case "CloseAccount":
        // Issued together with closing the user, who may never have had an account.
        return state._tag === "Open"
          ? [
              AccountClosed.make(
                { accountId: state.accountId, userId: command.userId, at },
                validatedElsewhere,
              ),
            ]
          : []
      default:
        return yield* unknownCommand(command)
    }
  })

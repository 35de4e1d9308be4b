import {
  AccountId,
  InvariantViolation,
  Ledger,
  type Points,
  Reference,
  type ReferenceId,
  TransactionId,
  type TransactionResource,
  User,
  type UserId,
  validatedElsewhere,
  Workflows,
} from "@points/domain"
import { Effect } from "effect"
import type { Outcome, States } from "../event-store/decide-and-append.js"
import { ledgerStream, readOnly, referenceStream, userStream } from "../event-store/stream-handle.js"
import { uuidV7 } from "../ids/uuid-v7.js"
import { getPointsAccount } from "../projections/points-accounts.js"
import {
  findTransactions,
  getTransaction,
  isMovement,
  transactionResourceOf,
  transactionRowOf,
} from "../projections/transactions.js"
import { appendContextOf, type RequestContext } from "./request-context.js"
import { userIdOf } from "./resource-ids.js"
import { runUnitOfWork } from "./run-unit-of-work.js"
import { runPlan, type UnitPlan } from "./unit-plan.js"
import { writeThenRead } from "./write-then-read.js"

/**
 * Open points account, explicitly (the first Add points opens one too). LE1001 when the user has one;
 * LE0002 unknown user, LE0001 while processing, LE0004 when closed.
 */
export const openPointsAccount = (context: RequestContext, userId: string) =>
  Effect.gen(function* () {
    const id = yield* userIdOf(userId)
    const accountId = AccountId.make(uuidV7())
    return yield* writeThenRead(
      runUnitOfWork(
        { user: userStream(id), ledger: ledgerStream(id) },
        (s) => Workflows.openAccountForUser(s, { _tag: "OpenAccount", userId: id, accountId }),
        appendContextOf(context),
      ),
      () => getPointsAccount(context.partnerId, id),
    )
  }).pipe(Effect.withSpan("points.openAccount"))

/** Get points account; LE0002 naming the user when unknown, naming the points account when it has none. */
export const getPointsAccountResource = (context: RequestContext, userId: string) =>
  getPointsAccount(context.partnerId, userId).pipe(Effect.withSpan("points.getAccount"))

/** What Add points and Subtract points take (the body's `transaction`). */
export interface PointsMovementInput {
  readonly user_id: string
  readonly amount: Points
  readonly reference_id: ReferenceId
  readonly description?: string | null | undefined
}

// One movement: the partner's reference id is reserved for the transaction and the ledger decides, in one unit
// of work (Workflows.reservingReference: the reservation first). The answer is the transaction the recorded
// event makes (a transaction never changes): what its GET answers, without reading it back.
const movementPlan = (context: RequestContext, kind: "add" | "subtract", input: PointsMovementInput) =>
  Effect.gen(function* () {
    const userId: UserId = yield* userIdOf(input.user_id)
    const transactionId = TransactionId.make(uuidV7())
    const accountId = AccountId.make(uuidV7())
    const { partnerId } = context
    const referenceId = input.reference_id
    // An add may open the account, and then names it on the user (a write); a subtract only reads the user.
    const streams = {
      reference: referenceStream(partnerId, "transaction", referenceId),
      user: kind === "add" ? userStream(userId) : readOnly(userStream(userId)),
      ledger: ledgerStream(userId),
    }
    return {
      streams,
      decide: (s: States<typeof streams>) => {
        // Commands of typed values already checked (the request's decoding, the ids made above): not
        // validated again on make (see validatedElsewhere).
        const reservation = Reference.ReserveReference.make(
          { partnerId, kind: "transaction", referenceId, recordId: transactionId },
          validatedElsewhere,
        )
        const movement = {
          userId,
          transactionId,
          amount: input.amount,
          referenceId,
          description: input.description ?? null,
        }
        return Workflows.reservingReference(
          reservation,
          s.reference,
          kind === "subtract"
            ? Effect.map(
                Ledger.decide(
                  Ledger.SubtractPoints.make(
                    { ...movement, holder: User.standingOf(s.user) },
                    validatedElsewhere,
                  ),
                  s.ledger,
                ),
                (ledger) => ({ ledger }),
              )
            : // An add opens the account when there is none, and then names it on the user.
              Workflows.openAccountForUser(s, { _tag: "AddPoints", ...movement, accountId }),
        )
      },
      answer: (outcome: Outcome<typeof streams>) => {
        const recorded = outcome.appended.ledger.find((item) => isMovement(item.event))
        return recorded === undefined
          ? Effect.die(new InvariantViolation("a points movement appended no movement event"))
          : Effect.succeed(
              transactionResourceOf(
                transactionRowOf(partnerId, recorded.globalPosition, recorded.event as Ledger.MovementEvent),
              ),
            )
      },
      context: appendContextOf(context),
    } satisfies UnitPlan<typeof streams, unknown, TransactionResource>
  })

/** Add points as a plan (see addPoints), for the write batcher. LE0002 for a user id that is not one. */
export const addPointsPlan = (context: RequestContext, input: PointsMovementInput) =>
  movementPlan(context, "add", input)

/** Subtract points as a plan (see subtractPoints), for the write batcher. */
export const subtractPointsPlan = (context: RequestContext, input: PointsMovementInput) =>
  movementPlan(context, "subtract", input)

/**
 * Add points: credits the user's account, opening it if it has none. LE0002 unknown user, LE0001 while
 * processing, LE0004 closed user or account, LE0006 duplicate reference id.
 */
export const addPoints = (context: RequestContext, input: PointsMovementInput) =>
  Effect.flatMap(addPointsPlan(context, input), runPlan).pipe(Effect.withSpan("points.add"))

/**
 * Subtract points: debits the user's open account, never below zero. LE2001 without an open account, LE2002
 * insufficient balance, LE0002 unknown user, LE0001 while processing, LE0004 closed, LE0006 duplicate.
 */
export const subtractPoints = (context: RequestContext, input: PointsMovementInput) =>
  Effect.flatMap(subtractPointsPlan(context, input), runPlan).pipe(Effect.withSpan("points.subtract"))

/** Get transaction; LE0002 when the partner has none with this id. */
export const getTransactionResource = (context: RequestContext, transactionId: string) =>
  getTransaction(context.partnerId, transactionId).pipe(Effect.withSpan("points.getTransaction"))

/** Find transactions: a page of the partner's, oldest first, optionally of one reference id and/or user. */
export const listTransactions = (
  context: RequestContext,
  query: {
    readonly reference_id?: string | undefined
    readonly user_id?: string | undefined
    readonly limit?: number | undefined
    readonly cursor?: string | undefined
  },
) => findTransactions(context.partnerId, query).pipe(Effect.withSpan("points.listTransactions"))

import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Cause, Effect, Exit, FastCheck, Option } from "effect"
import { InvariantViolation, Ledger, OrderId, Points, User } from "../src/index.js"
import { userId } from "./fixtures.js"
import {
  accountId,
  addTransactionId,
  orderReferenceId,
  referenceId,
  refundTransactionId,
} from "./ledger-fixtures.js"

// A few orders, so that random debits and refunds meet each other (redeliveries, refunds of paid orders).
const orders = [1, 2, 3, 4].map((n) => OrderId.make(`01936b2e-0000-7000-8000-0000000000e${n}`))

const amount = FastCheck.oneof(
  { arbitrary: FastCheck.integer({ min: 1, max: 300 }).map((n) => Points.make(n)), weight: 4 },
  { arbitrary: Arbitrary.make(Points), weight: 1 },
)
const holder = FastCheck.oneof(
  { arbitrary: FastCheck.constant<User.UserStanding>("active"), weight: 6 },
  { arbitrary: Arbitrary.make(User.UserStanding), weight: 1 },
)
const order = FastCheck.constantFrom(...orders)

const command: FastCheck.Arbitrary<Ledger.LedgerCommand> = FastCheck.oneof(
  { arbitrary: holder.map((h) => Ledger.OpenAccount.make({ userId, accountId, holder: h })), weight: 1 },
  {
    arbitrary: FastCheck.tuple(amount, holder).map(([a, h]) =>
      Ledger.AddPoints.make({
        userId,
        accountId,
        transactionId: addTransactionId,
        amount: a,
        referenceId,
        description: null,
        holder: h,
      }),
    ),
    weight: 5,
  },
  {
    arbitrary: FastCheck.tuple(amount, holder).map(([a, h]) =>
      Ledger.SubtractPoints.make({
        userId,
        transactionId: addTransactionId,
        amount: a,
        referenceId,
        description: "spent",
        holder: h,
      }),
    ),
    weight: 4,
  },
  {
    arbitrary: FastCheck.tuple(order, amount, holder).map(([o, a, h]) =>
      Ledger.DebitForOrder.make({
        userId,
        orderId: o,
        transactionId: addTransactionId,
        amount: a,
        referenceId: orderReferenceId,
        holder: h,
      }),
    ),
    weight: 4,
  },
  {
    arbitrary: order.map((o) =>
      Ledger.RefundOrder.make({ userId, orderId: o, transactionId: refundTransactionId }),
    ),
    weight: 3,
  },
  { arbitrary: FastCheck.constant(Ledger.CloseAccount.make({ userId })), weight: 1 },
)

// The refusals each command may answer with; anything else is a bug.
const userRefusals = ["ResourceNotFound", "UserBeingProcessed", "AlreadyClosed"]
const expectedRefusals: { readonly [Tag in Ledger.LedgerCommand["_tag"]]: ReadonlyArray<string> } = {
  OpenAccount: [...userRefusals, "PointsAccountConflict"],
  AddPoints: userRefusals,
  SubtractPoints: [...userRefusals, "NoPointsAccount", "InsufficientPoints"],
  DebitForOrder: [...userRefusals, "NoPointsAccount", "InsufficientPoints"],
  RefundOrder: [],
  CloseAccount: [],
}

const signed = (event: Ledger.MovementEvent): number =>
  event._tag === "PointsAdded" || event._tag === "OrderRefunded" ? event.amount : -event.amount

const isMovement = (event: Ledger.LedgerEvent): event is Ledger.MovementEvent =>
  event._tag === "PointsAdded" ||
  event._tag === "PointsSubtracted" ||
  event._tag === "OrderDebited" ||
  event._tag === "OrderRefunded"

const run = (commands: ReadonlyArray<Ledger.LedgerCommand>) =>
  Effect.gen(function* () {
    let state = Ledger.decider.initialState
    let sum = 0
    const debitedOrders = new Set<string>()
    for (const cmd of commands) {
      const exit = yield* Effect.exit(Ledger.decide(cmd, state))
      if (Exit.isSuccess(exit)) {
        for (const event of exit.value) {
          state = Ledger.evolve(state, event)
          if (isMovement(event)) {
            sum += signed(event)
            expect(event.balanceAfter).toBe(sum)
          }
          if (event._tag === "OrderDebited") debitedOrders.add(event.orderId)
        }
      } else {
        const refusal = Cause.failureOption(exit.cause)
        if (Option.isSome(refusal)) {
          expect(expectedRefusals[cmd._tag]).toContain(refusal.value._tag)
          if (refusal.value._tag === "InsufficientPoints" && state._tag !== "NoAccount") {
            expect(refusal.value.balance).toBe(state.balance)
            expect(refusal.value.requested).toBeGreaterThan(state.balance)
          }
        } else {
          // The one defect a command may die with: refunding an order this account never paid for.
          expect(cmd._tag).toBe("RefundOrder")
          expect(Cause.squash(exit.cause)).toBeInstanceOf(InvariantViolation)
          expect(cmd._tag === "RefundOrder" && debitedOrders.has(cmd.orderId)).toBe(false)
        }
      }
      const balance = state._tag === "NoAccount" ? 0 : state.balance
      expect(balance).toBe(sum)
      expect(balance).toBeGreaterThanOrEqual(0)
    }
  })

describe("Points account properties", () => {
  it.effect(
    "any sequence of commands keeps the balance equal to the sum of its movements, never below zero",
    () =>
      Effect.sync(() =>
        FastCheck.assert(
          FastCheck.property(FastCheck.array(command, { minLength: 10, maxLength: 60 }), (commands) =>
            Effect.runSync(run(commands)),
          ),
          { numRuns: 120 },
        ),
      ),
  )
})

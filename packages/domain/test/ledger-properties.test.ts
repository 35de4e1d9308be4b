import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Cause, Effect, Exit, FastCheck, Option } from "effect"
import { Ledger, OrderId, Points, ReferenceId, User } from "../src/index.js"
import { userId } from "./fixtures.js"
import { accountId, addTransactionId, referenceId, refundTransactionId } from "./ledger-fixtures.js"

const amount = FastCheck.oneof(
  { arbitrary: FastCheck.integer({ min: 1, max: 300 }).map((n) => Points.make(n)), weight: 4 },
  { arbitrary: Arbitrary.make(Points), weight: 1 },
)
const holder = FastCheck.oneof(
  { arbitrary: FastCheck.constant<User.UserStanding>("active"), weight: 6 },
  { arbitrary: Arbitrary.make(User.UserStanding), weight: 1 },
)

// Orders are what the Order aggregate guarantees: each is debited once, under a fresh id, and refunded at most
// once, for exactly its debit. So debits and refunds are steps that the run turns into commands: a debit for
// a new order, a refund of one of the orders debited and not refunded yet (which the run tracks, not the state).
type Step =
  | Exclude<Ledger.LedgerCommand, Ledger.DebitForOrder | Ledger.RefundOrder>
  | { readonly _tag: "DebitNewOrder"; readonly amount: Points; readonly holder: User.UserStanding }
  | { readonly _tag: "RefundOpenOrder"; readonly pick: number }

const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
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
    arbitrary: FastCheck.tuple(amount, holder).map(
      ([a, h]): Step => ({ _tag: "DebitNewOrder", amount: a, holder: h }),
    ),
    weight: 4,
  },
  {
    arbitrary: FastCheck.nat().map((pick): Step => ({ _tag: "RefundOpenOrder", pick })),
    weight: 3,
  },
  { arbitrary: FastCheck.constant(Ledger.CloseAccount.make({ userId })), weight: 1 },
)

// The refusals each command may answer with; anything else, and any defect, is a bug.
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

interface OpenOrder {
  readonly amount: Points
  readonly referenceId: ReferenceId
}

// Refunds across all runs, so the property can show it did exercise them.
let refundsSeen = 0

const run = (steps: ReadonlyArray<Step>) =>
  Effect.gen(function* () {
    let state = Ledger.decider.initialState
    let sum = 0
    let debits = 0
    let refunds = 0
    // The orders debited and not refunded yet, oldest first: the Order aggregate's view, kept by the test.
    const openOrders = new Map<OrderId, OpenOrder>()
    let orders = 0
    for (const current of steps) {
      let cmd: Ledger.LedgerCommand
      if (current._tag === "DebitNewOrder") {
        orders++
        cmd = Ledger.DebitForOrder.make({
          userId,
          orderId: OrderId.make(`01936b2e-0000-7000-8000-${orders.toString(16).padStart(12, "0")}`),
          transactionId: addTransactionId,
          amount: current.amount,
          referenceId: ReferenceId.make(`order-ref-${orders}`),
          holder: current.holder,
        })
      } else if (current._tag === "RefundOpenOrder") {
        const open = [...openOrders]
        const picked = open[current.pick % Math.max(open.length, 1)]
        if (picked === undefined) continue
        const [orderId, order] = picked
        cmd = Ledger.RefundOrder.make({
          userId,
          orderId,
          transactionId: refundTransactionId,
          amount: order.amount,
          referenceId: order.referenceId,
        })
      } else {
        cmd = current
      }
      const exit = yield* Effect.exit(Ledger.decide(cmd, state))
      if (Exit.isSuccess(exit)) {
        for (const event of exit.value) {
          state = Ledger.evolve(state, event)
          if (isMovement(event)) {
            sum += signed(event)
            expect(event.balanceAfter).toBe(sum)
          }
          if (event._tag === "OrderDebited") {
            debits += event.amount
            openOrders.set(event.orderId, { amount: event.amount, referenceId: event.referenceId })
          }
          if (event._tag === "OrderRefunded") {
            // The refund pays back exactly what the order states.
            expect(cmd._tag === "RefundOrder" && cmd.orderId === event.orderId).toBe(true)
            expect(event.amount).toBe(openOrders.get(event.orderId)?.amount)
            expect(event.referenceId).toBe(openOrders.get(event.orderId)?.referenceId)
            refunds += event.amount
            refundsSeen++
            openOrders.delete(event.orderId)
          }
        }
        // A refund of an order debited and not refunded yet is never refused, whatever became of the account.
        if (cmd._tag === "RefundOrder")
          expect(exit.value.map((event) => event._tag)).toEqual(["OrderRefunded"])
      } else {
        const refusal = Cause.failureOption(exit.cause)
        // No command of this run breaks an invariant: every refund is of an open order debit.
        expect(Option.isSome(refusal), `${cmd._tag} died: ${Cause.pretty(exit.cause)}`).toBe(true)
        if (Option.isNone(refusal)) return
        expect(expectedRefusals[cmd._tag]).toContain(refusal.value._tag)
        if (refusal.value._tag === "InsufficientPoints" && state._tag !== "NoAccount") {
          expect(refusal.value.balance).toBe(state.balance)
          expect(refusal.value.requested).toBeGreaterThan(state.balance)
        }
      }
      const balance = state._tag === "NoAccount" ? 0 : state.balance
      expect(balance).toBe(sum)
      expect(balance).toBeGreaterThanOrEqual(0)
      const outstanding = state._tag === "NoAccount" ? 0 : state.outstandingOrderDebits
      expect(outstanding).toBe(debits - refunds)
      expect(outstanding).toBe([...openOrders.values()].reduce((total, order) => total + order.amount, 0))
      expect(outstanding).toBeGreaterThanOrEqual(0)
    }
  })

describe("Points account properties", () => {
  it.effect(
    "any sequence of commands keeps the balance equal to the sum of its movements, never below zero, and the " +
      "outstanding order debits equal to the debits minus the refunds, never below zero",
    () =>
      Effect.sync(() => {
        refundsSeen = 0
        FastCheck.assert(
          FastCheck.property(FastCheck.array(step, { minLength: 10, maxLength: 60 }), (steps) =>
            Effect.runSync(run(steps)),
          ),
          { numRuns: 120 },
        )
        expect(refundsSeen).toBeGreaterThan(0)
      }),
  )
})

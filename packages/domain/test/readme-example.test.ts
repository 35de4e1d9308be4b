// The examples of README.md, kept here so that they compile and run: readme.test.ts checks that the README
// shows each region verbatim, in this order, so the documentation cannot drift from what works.
// #region example
import { describe, expect, it } from "@effect/vitest"
import {
  AccountId,
  InsufficientPoints,
  Ledger,
  NoPointsAccount,
  Order,
  OrderId,
  Points,
  PointsBalance,
  ReferenceId,
  Sku,
  TransactionId,
  UserId,
  Workflows,
} from "@points/domain"
import { DeciderSpecification } from "@points/domain/testing"
import { DateTime, Effect } from "effect"

const userId = UserId.make("01936b2e-0000-7000-8000-0000000000a1")
const accountId = AccountId.make("01936b2e-0000-7000-8000-0000000000b1")
const at = DateTime.unsafeMake(0) // it.effect runs on TestClock, which starts at 0

const opened = Ledger.AccountOpened.make({ accountId, userId, at })
const added = Ledger.PointsAdded.make({
  transactionId: TransactionId.make("01936b2e-0000-7000-8000-0000000000c1"),
  accountId,
  userId,
  amount: Points.make(100),
  balanceAfter: PointsBalance.make(100),
  referenceId: ReferenceId.make("welcome-bonus"),
  description: null,
  at,
})

const subtract = (amount: number) =>
  Ledger.SubtractPoints.make({
    userId,
    transactionId: TransactionId.make("01936b2e-0000-7000-8000-0000000000c2"),
    amount: Points.make(amount),
    referenceId: ReferenceId.make("redemption-1"),
    description: null,
    holder: "active", // the account holder's status, as the caller read it
  })

const spec = DeciderSpecification.for(Ledger.decider)

describe("a points account", () => {
  it.effect("pays out what it holds", () =>
    spec
      .given([opened, added])
      .when(subtract(30))
      .then([
        Ledger.PointsSubtracted.make({
          transactionId: TransactionId.make("01936b2e-0000-7000-8000-0000000000c2"),
          accountId,
          userId,
          amount: Points.make(30),
          balanceAfter: PointsBalance.make(70),
          referenceId: ReferenceId.make("redemption-1"),
          description: null,
          at,
        }),
      ]),
  )

  it.effect("never goes below zero (LE2002)", () =>
    spec
      .given([opened, added])
      .when(subtract(150))
      .thenFails(new InsufficientPoints({ balance: 100, requested: 150 })),
  )
})
// #endregion example

// #region first-add
describe("the first points added to a user", () => {
  const welcome = TransactionId.make("01936b2e-0000-7000-8000-0000000000c3")

  it.effect("open the account, then credit it", () =>
    spec
      .given([]) // no account yet
      .when(
        Ledger.AddPoints.make({
          userId,
          accountId, // the id of the account this Add opens (ignored once the account is open)
          transactionId: welcome,
          amount: Points.make(50),
          referenceId: ReferenceId.make("welcome-bonus"),
          description: "welcome",
          holder: "active",
        }),
      )
      .then([
        Ledger.AccountOpened.make({ accountId, userId, at }),
        Ledger.PointsAdded.make({
          transactionId: welcome,
          accountId,
          userId,
          amount: Points.make(50),
          balanceAfter: PointsBalance.make(50),
          referenceId: ReferenceId.make("welcome-bonus"),
          description: "welcome",
          at,
        }),
      ]),
  )
})
// #endregion first-add

// #region place-order
describe("placing an order", () => {
  const orderId = OrderId.make("01936b2e-0000-7000-8000-0000000000d1")
  const debitTransactionId = TransactionId.make("01936b2e-0000-7000-8000-0000000000c4")
  const place = Order.PlaceOrder.make({
    orderId,
    userId,
    referenceId: ReferenceId.make("order-1"),
    items: [{ sku: Sku.make("MUG-1"), name: "Mug", quantity: 2, points: Points.make(150) }],
    debitTransactionId, // the id the debit of its total will carry
  })

  // The order's own stream: it never refuses a new order, and records its total.
  it.effect("records a pending order with its total", () =>
    DeciderSpecification.for(Order.decider)
      .given([])
      .when(place)
      .then([
        Order.OrderPlaced.make({
          orderId,
          userId,
          referenceId: ReferenceId.make("order-1"),
          items: place.items,
          totalPoints: Points.make(300), // 2 * 150
          debitTransactionId,
          at,
        }),
      ]),
  )

  // Paying for it is the ledger's part: the workflow decides both streams, and refuses both together.
  it.effect("is refused when the buyer has no points account (LE2001)", () =>
    Effect.gen(function* () {
      const refusal = yield* Effect.flip(
        Workflows.placeOrder(
          { holder: "active", ledger: Ledger.decider.initialState, order: Order.decider.initialState },
          place,
        ),
      )
      expect(refusal).toBeInstanceOf(NoPointsAccount)
      expect(refusal.code).toBe("LE2001")
    }),
  )
})
// #endregion place-order

// The README's workflow example, run where its names are at hand (they are shown earlier in the README).
describe("a workflow", () => {
  const { Email, PartnerId, PartnerUserId, User } = Domain
  const { replay, sequentialId } = Testing
  const registered = User.UserRegistered.make({
    userId,
    partnerId: PartnerId.make(sequentialId(1)),
    partnerUserId: PartnerUserId.make("p-1"),
    email: Email.make("ada@example.com"),
    name: null,
    at,
  })
  const activated = User.UserActivated.make({ userId, at })

  it.effect(
    "opens the account and names it on the user at the same moment; the first Add opens one too",
    () =>
      Effect.gen(function* () {
        // #region workflow
        const user = replay(User.decider, [registered, activated])
        const { user: linked, ledger } = yield* Workflows.openAccountForUser(
          { user, ledger: Ledger.decider.initialState },
          { _tag: "OpenAccount", userId, accountId },
        )
        // ledger: [AccountOpened]; linked: [PointsAccountLinked], at the same moment

        // The first Add points opens the account too: the command's fields without `holder`, which the workflow
        // reads from the user's state.
        const { ledger: credited } = yield* Workflows.openAccountForUser(
          { user, ledger: Ledger.decider.initialState },
          {
            _tag: "AddPoints",
            userId,
            accountId,
            transactionId: TransactionId.make(sequentialId(2)),
            amount: Points.make(500),
            referenceId: ReferenceId.make("welcome-bonus"),
            description: null,
          },
        )
        // credited: [AccountOpened, PointsAdded]
        // #endregion workflow
        expect(ledger.map((event) => event._tag)).toEqual(["AccountOpened"])
        expect(linked.map((event) => event._tag)).toEqual(["PointsAccountLinked"])
        expect(DateTime.toEpochMillis(linked[0]?.at ?? at)).toBe(DateTime.toEpochMillis(ledger[0]?.at ?? at))
        expect(credited.map((event) => event._tag)).toEqual(["AccountOpened", "PointsAdded"])
      }),
  )
})

// Hoisted like every import; here, so that the README's example keeps its own imports as shown.
import * as Domain from "@points/domain"
import * as Testing from "@points/domain/testing"

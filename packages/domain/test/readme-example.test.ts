// The example of README.md, kept here so that it runs: readme.test.ts checks that the README shows this
// region verbatim, so the documentation cannot drift from what works.
// #region example
import { describe, it } from "@effect/vitest"
import {
  AccountId,
  InsufficientPoints,
  Ledger,
  Points,
  PointsBalance,
  ReferenceId,
  TransactionId,
  UserId,
} from "@points/domain"
import { DeciderSpecification } from "@points/domain/testing"
import { DateTime } from "effect"

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

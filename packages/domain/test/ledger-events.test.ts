import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Ledger, Points, PointsBalance, validatedElsewhere } from "../src/index.js"
import { checkCatalogRoundTrip } from "../src/testing/index.js"
import { epoch, userId } from "./fixtures.js"
import {
  accountId,
  addTransactionId,
  debitTransactionId,
  orderId,
  orderReferenceId,
  referenceId,
  refundTransactionId,
  subtractTransactionId,
} from "./ledger-fixtures.js"

const amount = Points.make(25)
const balanceAfter = PointsBalance.make(75)
const common = { accountId, userId, amount, balanceAfter, at: epoch }
const transaction = {
  accountId,
  userId,
  amount,
  balanceAfter,
  createdAt: epoch,
}

describe("Points account events in the store", () => {
  it.effect("round-trip through encode and decode", () => checkCatalogRoundTrip(Ledger.ledgerEvents))

  it.effect("are stored under their own type at version 1", () =>
    Effect.sync(() => {
      expect(Ledger.ledgerEvents.types).toEqual([
        "AccountOpened",
        "PointsAdded",
        "PointsSubtracted",
        "OrderDebited",
        "OrderRefunded",
        "AccountClosed",
      ])
      for (const type of Ledger.ledgerEvents.types) expect(Ledger.ledgerEvents.versionOf(type)).toBe(1)
    }),
  )

  it("made without validation (validatedElsewhere), are still validated when encoded for the store", () => {
    const valid = Ledger.PointsAdded.make(
      { ...common, transactionId: addTransactionId, referenceId, description: null },
      validatedElsewhere,
    )
    expect(Ledger.ledgerEvents.encode(valid).data).toMatchObject({ amount: 25, balanceAfter: 75 })
    // What a faulty decider could make: a negative amount, a fractional balance. The store never takes it.
    const faulty = Ledger.PointsAdded.make(
      { ...valid, amount: -5 as Points, balanceAfter: 7.5 as PointsBalance },
      validatedElsewhere,
    )
    expect(faulty.amount).toBe(-5)
    expect(() => Ledger.ledgerEvents.encode(faulty)).toThrow(/amount/)
    expect(() => Ledger.PointsAdded.make({ ...valid, amount: -5 as Points })).toThrow(/amount/)
  })
})

describe("Points transactions", () => {
  it("are read off each kind of movement, with null where a kind has no such field", () => {
    const movements: ReadonlyArray<[Ledger.MovementEvent, Ledger.PointsTransaction]> = [
      [
        Ledger.PointsAdded.make({
          ...common,
          transactionId: addTransactionId,
          referenceId,
          description: "bonus",
        }),
        {
          ...transaction,
          transactionId: addTransactionId,
          type: "add",
          referenceId,
          description: "bonus",
          orderId: null,
        },
      ],
      [
        Ledger.PointsSubtracted.make({
          ...common,
          transactionId: subtractTransactionId,
          referenceId,
          description: null,
        }),
        {
          ...transaction,
          transactionId: subtractTransactionId,
          type: "subtract",
          referenceId,
          description: null,
          orderId: null,
        },
      ],
      [
        Ledger.OrderDebited.make({
          ...common,
          transactionId: debitTransactionId,
          orderId,
          referenceId: orderReferenceId,
        }),
        {
          ...transaction,
          transactionId: debitTransactionId,
          type: "order_debit",
          referenceId: orderReferenceId,
          description: null,
          orderId,
        },
      ],
      [
        Ledger.OrderRefunded.make({
          ...common,
          transactionId: refundTransactionId,
          orderId,
          referenceId: orderReferenceId,
        }),
        {
          ...transaction,
          transactionId: refundTransactionId,
          type: "order_refund",
          referenceId: orderReferenceId,
          description: null,
          orderId,
        },
      ],
    ]
    for (const [event, expected] of movements) {
      const record = Ledger.transactionOf(event)
      expect(record).toEqual(expected)
      // The record is valid by its own schema, so the read model can store and publish it as is.
      expect(Schema.is(Ledger.PointsTransaction)(record)).toBe(true)
    }
  })
})

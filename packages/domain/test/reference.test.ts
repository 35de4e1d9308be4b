import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, TestClock } from "effect"
import { DuplicateReferenceId, InvariantViolation, Reference } from "../src/index.js"
import { checkCatalogRoundTrip, DeciderSpecification, replay } from "../src/testing/index.js"
import { epoch, partnerId } from "./fixtures.js"
import { addTransactionId, orderId, orderReferenceId, referenceId } from "./ledger-fixtures.js"

const spec = DeciderSpecification.for(Reference.decider)
const reserve = Reference.ReserveReference.make({
  partnerId,
  kind: "transaction",
  referenceId,
  recordId: addTransactionId,
})
const reserved = Reference.ReferenceReserved.make({
  partnerId,
  kind: "transaction",
  referenceId,
  recordId: addTransactionId,
  at: epoch,
})

describe("Reference id reservation", () => {
  it.effect("reserves a free reference id for its record, stamped with the clock", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust(Duration.seconds(2))
      yield* spec
        .given([])
        .when(reserve)
        .then([Reference.ReferenceReserved.make({ ...reserved, at: DateTime.unsafeMake(2000) })])
    }),
  )

  it.effect("refuses a second record with the same reference id (LE0006), whatever record asks", () =>
    Effect.gen(function* () {
      yield* spec
        .given([reserved])
        .when(reserve)
        .thenFails(new DuplicateReferenceId({ kind: "transaction", referenceId }))
      const orderReserved = Reference.ReferenceReserved.make({
        partnerId,
        kind: "order",
        referenceId: orderReferenceId,
        recordId: orderId,
        at: epoch,
      })
      yield* spec
        .given([orderReserved])
        .when(Reference.ReserveReference.make({ ...orderReserved, recordId: orderId }))
        .thenFails(new DuplicateReferenceId({ kind: "order", referenceId: orderReferenceId }))
    }),
  )

  it("remembers which record took the reference id, and refuses a stream reserved twice", () => {
    expect(replay(Reference.decider, [reserved])).toEqual({
      _tag: "Reserved",
      partnerId,
      kind: "transaction",
      referenceId,
      recordId: addTransactionId,
      reservedAt: epoch,
    })
    expect(() => replay(Reference.decider, [reserved, reserved])).toThrow(InvariantViolation)
  })

  it.effect("events round-trip through encode and decode", () =>
    checkCatalogRoundTrip(Reference.referenceEvents),
  )
})

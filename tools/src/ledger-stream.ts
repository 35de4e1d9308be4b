import {
  AccountId,
  Description,
  Ledger,
  OrderId,
  Points,
  PointsBalance,
  ReferenceId,
  TransactionId,
  UserId,
} from "@points/domain"
import { DateTime } from "effect"

/** The share of each movement kind in a generated stream (they need not sum to 1). */
export interface LedgerStreamMix {
  readonly add: number
  readonly subtract: number
  readonly debit: number
  readonly refund: number
}

// A deterministic generator (mulberry32), so that every run folds the same stream.
const random = (seed: number) => {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const uuid = (n: number) => `01936b2e-0000-7000-8000-${n.toString(16).padStart(12, "0")}`

/**
 * A valid stream of `count` events for one account: opened, then movements drawn from the mix, every
 * `balanceAfter` consistent, refunds only of open order debits. Built with the schemas' constructors, so an
 * invalid stream fails here rather than in the benchmark.
 */
export const ledgerStream = (count: number, mix: LedgerStreamMix): ReadonlyArray<Ledger.LedgerEvent> => {
  const next = random(42)
  const userId = UserId.make(uuid(1))
  const accountId = AccountId.make(uuid(2))
  const start = DateTime.unsafeMake(Date.UTC(2026, 0, 1))
  const events: Array<Ledger.LedgerEvent> = [Ledger.AccountOpened.make({ accountId, userId, at: start })]
  const openOrders: Array<{ orderId: OrderId; amount: Points; referenceId: ReferenceId }> = []
  const total = mix.add + mix.subtract + mix.debit + mix.refund
  let balance = 0
  for (let n = 1; events.length < count; n++) {
    const at = DateTime.add(start, { seconds: n })
    const transactionId = TransactionId.make(uuid(1_000_000 + n))
    const referenceId = ReferenceId.make(`ref-${n}`)
    const amount = Points.make(1 + Math.floor(next() * 500))
    const roll = next() * total
    const common = { transactionId, accountId, userId, amount, referenceId, at }
    if (roll < mix.add || balance < amount) {
      balance += amount
      events.push(
        Ledger.PointsAdded.make({
          ...common,
          balanceAfter: PointsBalance.make(balance),
          description: Description.make("bonus"),
        }),
      )
    } else if (roll < mix.add + mix.subtract) {
      balance -= amount
      events.push(
        Ledger.PointsSubtracted.make({
          ...common,
          balanceAfter: PointsBalance.make(balance),
          description: null,
        }),
      )
    } else if (roll < mix.add + mix.subtract + mix.debit || openOrders.length === 0) {
      balance -= amount
      const orderId = OrderId.make(uuid(2_000_000 + n))
      openOrders.push({ orderId, amount, referenceId })
      events.push(Ledger.OrderDebited.make({ ...common, orderId, balanceAfter: PointsBalance.make(balance) }))
    } else {
      const order = openOrders.splice(Math.floor(next() * openOrders.length), 1)[0]
      if (order === undefined) throw new Error("no open order to refund")
      balance += order.amount
      events.push(
        Ledger.OrderRefunded.make({
          ...common,
          orderId: order.orderId,
          amount: order.amount,
          referenceId: order.referenceId,
          balanceAfter: PointsBalance.make(balance),
        }),
      )
    }
  }
  return events
}

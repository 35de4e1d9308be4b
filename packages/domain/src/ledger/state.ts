import type { DateTime } from "effect"
import type { AccountId, UserId } from "../shared/ids.js"
import type { PointsBalance } from "../shared/points.js"

/** A user's points account, open or closed, as its stream describes it. */
export interface PointsAccount {
  readonly _tag: "Open" | "Closed"
  readonly accountId: AccountId
  readonly userId: UserId
  readonly balance: PointsBalance
  readonly createdAt: DateTime.Utc
  readonly updatedAt: DateTime.Utc
  /** Grows with every event. */
  readonly version: number
  /**
   * Points debited for orders and not refunded yet, never below zero. Which order was refunded is the order's
   * business (failed and cancelled are exclusive final states); the account keeps only this bounded total.
   */
  readonly outstandingOrderDebits: number
}

/** The state of a points account's stream: no account yet, or the account. */
export type LedgerState = { readonly _tag: "NoAccount" } | PointsAccount

/** The state before the first event. */
export const noAccount: LedgerState = { _tag: "NoAccount" }

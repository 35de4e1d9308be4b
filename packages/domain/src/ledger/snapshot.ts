import { Schema } from "effect"
import { AccountId, UserId } from "../shared/ids.js"
import { PointsBalance } from "../shared/points.js"
import type { LedgerState } from "./state.js"

const PointsAccountSnapshot = Schema.Struct({
  _tag: Schema.Literal("Open", "Closed"),
  accountId: AccountId,
  userId: UserId,
  balance: PointsBalance,
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc,
  version: Schema.Int,
  outstandingOrderDebits: Schema.Int,
})

const LedgerStateSnapshotUnion = Schema.Union(Schema.TaggedStruct("NoAccount", {}), PointsAccountSnapshot)

/**
 * A ledger state as JSON, so a store can keep it beside the stream and load an account without folding its
 * whole history. Rename `LEDGER_SNAPSHOT` whenever `evolve` changes what a state holds: stored snapshots of
 * the old name are then ignored and the stream folded again.
 */
export const LedgerStateSnapshot: Schema.Schema<LedgerState, typeof LedgerStateSnapshotUnion.Encoded> =
  LedgerStateSnapshotUnion

/** The name (and revision) of the ledger's snapshot format. */
export const LEDGER_SNAPSHOT = "ledger/1"

import type { LogCheckpoint } from "../event-store/recorded-event.js"

/** A checkpoint as the driver returns it: xid8 and bigint selected as text, since both exceed 2^53. */
export interface CheckpointRow {
  readonly transaction_id: string
  readonly global_position: string
}

/** The checkpoint a row holds. */
export const checkpointOf = (row: CheckpointRow): LogCheckpoint => ({
  transactionId: BigInt(row.transaction_id),
  globalPosition: BigInt(row.global_position),
})

/** Orders two places in the global log in commit order: negative when `a` comes first. */
export const compareCheckpoints = (a: LogCheckpoint, b: LogCheckpoint): -1 | 0 | 1 =>
  a.transactionId !== b.transactionId
    ? a.transactionId < b.transactionId
      ? -1
      : 1
    : a.globalPosition < b.globalPosition
      ? -1
      : a.globalPosition > b.globalPosition
        ? 1
        : 0

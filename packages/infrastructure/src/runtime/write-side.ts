import { Layer } from "effect"
import { LogListener } from "../consumers/log-listener.js"
import { LogNotifier } from "../event-store/log-notifier.js"
import { InlineProjectionLive } from "../projections/inline-projection-live.js"
import { WriteBatcher } from "../write-batch/write-batcher.js"

const writers = Layer.mergeAll(InlineProjectionLive, LogNotifier.layer)

/**
 * What a process that writes events needs beside the database: the inline read models, the NOTIFY after each
 * commit, the write batcher (group commit of idempotent writes), and the one LISTEN connection its consumers
 * share.
 */
export const WriteSideLive = Layer.mergeAll(
  Layer.provideMerge(WriteBatcher.layer, writers),
  LogListener.layer,
)

import { Layer } from "effect"
import { LogListener } from "../consumers/log-listener.js"
import { LogNotifier } from "../event-store/log-notifier.js"
import { InlineProjectionLive } from "../projections/inline-projection-live.js"

/**
 * What a process that writes events needs beside the database: the inline read models, the NOTIFY after each
 * commit, and the one LISTEN connection its consumers share.
 */
export const WriteSideLive = Layer.mergeAll(InlineProjectionLive, LogNotifier.layer, LogListener.layer)

import { Context, Effect, Layer } from "effect"
import type { RecordedEvent } from "./recorded-event.js"

/** What one stream became in a unit of work: its state before, its events as recorded, its state after them. */
export interface StreamChange {
  readonly streamId: string
  readonly partnerId: string
  /** The state the decision was made on; folding `events` onto it gives `state` (and every state between). */
  readonly stateBefore: unknown
  readonly events: ReadonlyArray<RecordedEvent>
  readonly state: unknown
}

/**
 * Read models written in the transaction that appends the events they reflect, so a GET right after a POST
 * always sees it. The unit of work calls `apply` once per changed stream, before it commits.
 */
export class InlineProjection extends Context.Tag("@points/infrastructure/InlineProjection")<
  InlineProjection,
  { readonly apply: (change: StreamChange) => Effect.Effect<void, unknown> }
>() {
  /** No read models: for tests of the event store alone. */
  static readonly none = Layer.succeed(InlineProjection, { apply: () => Effect.void })
}

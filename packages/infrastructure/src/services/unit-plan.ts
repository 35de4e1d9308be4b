import type { Effect } from "effect"
import type { Decision, Outcome, States } from "../event-store/decide-and-append.js"
import type { AppendContext } from "../event-store/recorded-event.js"
import type { AnyStreamHandle } from "../event-store/stream-handle.js"
import { runUnitOfWork } from "./run-unit-of-work.js"
import { writeThenRead } from "./write-then-read.js"

/**
 * A write described before it runs: the streams of its unit of work, the decision on their states, and the
 * answer made from what the unit recorded (no read back). `runPlan` runs one alone; the write batcher runs
 * many in one transaction, deciding each on the states the ones before it left.
 */
export interface UnitPlan<Streams extends Record<string, AnyStreamHandle>, X, A> {
  readonly streams: Streams
  readonly decide: (states: States<Streams>) => Effect.Effect<Decision<Streams>, X>
  readonly answer: (outcome: Outcome<Streams>) => Effect.Effect<A>
  readonly context: AppendContext
}

/** A plan of any streams, refusal and answer: what the batcher queues. */
// biome-ignore lint/suspicious/noExplicitAny: plans of every aggregate go through one queue.
export type AnyUnitPlan = UnitPlan<Record<string, AnyStreamHandle>, any, any>

/** Runs a plan as its own unit of work (in the caller's transaction, if any) and answers from its outcome. */
export const runPlan = <Streams extends Record<string, AnyStreamHandle>, X, A>(
  plan: UnitPlan<Streams, X, A>,
) => writeThenRead(runUnitOfWork(plan.streams, plan.decide, plan.context), plan.answer)

/** A plan as the batcher queues it, its types erased: the batcher hands it only its own streams' states. */
export const anyUnitPlan = <Streams extends Record<string, AnyStreamHandle>, X, A>(
  plan: UnitPlan<Streams, X, A>,
): AnyUnitPlan => plan as unknown as AnyUnitPlan

import { Effect } from "effect"

/**
 * The shape of every aggregate: a command is decided against the current state and yields the events that
 * record what happened (or a typed refusal); the state is the fold of those events through `evolve`.
 * `decide` may read the time through Effect's `Clock` and nothing else; `evolve` is a plain function.
 */
export interface Decider<Command, Event, State, Err> {
  readonly initialState: State
  readonly decide: (command: Command, state: State) => Effect.Effect<ReadonlyArray<Event>, Err>
  readonly evolve: (state: State, event: Event) => State
}

/** The command type a decider takes. */
export type CommandOf<D> = D extends Decider<infer C, infer _E, infer _S, infer _X> ? C : never
/** The event type a decider produces. */
export type EventOf<D> = D extends Decider<infer _C, infer E, infer _S, infer _X> ? E : never
/** The state type a decider folds. */
export type StateOf<D> = D extends Decider<infer _C, infer _E, infer S, infer _X> ? S : never
/** The errors a decider refuses commands with. */
export type ErrorOf<D> = D extends Decider<infer _C, infer _E, infer _S, infer X> ? X : never

/** Folds a stream of events into the state it describes, starting from the decider's initial state. */
export const fold = <C, E, S, X>(decider: Decider<C, E, S, X>, events: Iterable<E>): S => {
  let state = decider.initialState
  for (const event of events) state = decider.evolve(state, event)
  return state
}

/**
 * Fails loudly when an invariant that the deciders guarantee is broken (a negative balance, a transition out
 * of a final state). Reaching one means a bug or a corrupt stream, never a client mistake.
 */
export class InvariantViolation extends Error {
  override readonly name = "InvariantViolation"
}

/** Throws an InvariantViolation with the message when the condition is false. */
export function invariant(condition: boolean, message: string): asserts condition {
  if (!condition) throw new InvariantViolation(message)
}

/**
 * The end of an evolve's exhaustive switch: an event of another stream type (a routing bug, or a test that
 * ran unchecked) fails loudly instead of folding into `undefined`.
 */
export const unknownEvent = (event: never): never => {
  throw new InvariantViolation(
    `an event this stream cannot have: ${String((event as { _tag?: unknown })._tag)}`,
  )
}

/**
 * The end of a decide's exhaustive switch: a command of another stream type (a routing bug, or a test that
 * ran unchecked) dies loudly instead of deciding `undefined`.
 */
export const unknownCommand = (command: never): Effect.Effect<never> =>
  Effect.die(
    new InvariantViolation(
      `a command this stream cannot take: ${String((command as { _tag?: unknown })._tag)}`,
    ),
  )

/**
 * The make option for values whose fields are validated elsewhere, so not again when made: the events a
 * decider decides (their fields come from a command validated when it was made and from the aggregate's own
 * state, and the event store validates every event as it encodes it for storage), and commands built of
 * values already checked (decoded request fields, ids just made). Worth it on the write path: a Schema class
 * validating in its constructor rebuilds its parser on every call (about 50 µs, several times per request).
 */
export const validatedElsewhere = { disableValidation: true } as const

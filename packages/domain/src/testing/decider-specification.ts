import { Cause, Effect, Effectable, Exit, Option } from "effect"
import { type Decider, fold, InvariantViolation } from "../shared/decider.js"
import { SpecificationFailure } from "./specification-failure.js"
import { structurallyEqual } from "./structural-equality.js"

/** The last step of a specification: what the command must produce. */
export interface Then<Event, Err> {
  /** Succeeds when the command yields exactly these events, in this order. */
  readonly then: (expected: ReadonlyArray<Event>) => Effect.Effect<void>
  /** Succeeds when the command yields no event (an accepted no-op). */
  readonly thenNothingHappens: () => Effect.Effect<void>
  /** Succeeds when the command is refused with an error equal to this one (same tag and fields). */
  readonly thenFails: (expected: Err) => Effect.Effect<void>
  /** Succeeds when the command is refused with an error of this code (LE2002, ...), whatever its fields. */
  readonly thenFailsWithCode: (code: CodeOf<Err>) => Effect.Effect<void>
  /**
   * Succeeds when the command breaks an invariant (dies with an InvariantViolation): a bug or a corrupt stream,
   * never a client mistake. With `messagePart`, the violation's message must contain it.
   */
  readonly thenBreaksInvariant: (messagePart?: string) => Effect.Effect<void>
  /** Runs the command and hands its events to your own assertions; fails if the command is refused. */
  readonly thenEvents: (assert: (events: ReadonlyArray<Event>) => void) => Effect.Effect<void>
}

/** The error codes a decider's refusals carry. */
export type CodeOf<Err> = Err extends { readonly code: infer Code } ? Code : never

/** The middle step: the command under test. */
export interface When<Command, Event, Err> {
  readonly when: (command: Command) => Then<Event, Err>
}

/** A given/when/then specification for one decider. */
export interface Specification<Command, Event, Err> {
  /** The history of the stream before the command: the events that built its state. */
  readonly given: (history: ReadonlyArray<Event>) => When<Command, Event, Err>
}

/**
 * What a specification left without its last step (`given(...).when(...)`) fails with, whether it is awaited
 * (returned from a plain `it`) or run as an Effect (returned from `it.effect`, yielded in `Effect.gen`).
 */
const unfinished = () =>
  new SpecificationFailure(
    "a specification was awaited or run without its last step: finish it with then/thenFails/thenFailsWithCode/" +
      "thenNothingHappens/thenBreaksInvariant/thenEvents and run the Effect that returns (it.effect), " +
      "instead of given(...).when(...)",
    "given(...).when(...)",
    "given(...).when(...).then(...), or another last step",
  )

const describe = (value: unknown) => {
  try {
    return JSON.stringify(value)
  } catch {
    return String(value)
  }
}

const awaitedFinished = () =>
  new SpecificationFailure(
    "a finished specification was awaited instead of run: it is an Effect; return it from it.effect, or " +
      "yield* it in Effect.gen (a plain `it` that returns it passes without running it)",
    "await given(...).when(...).then(...)",
    "it.effect(() => given(...).when(...).then(...))",
  )

// A last step's Effect, also refusing to be awaited: a plain `it` awaits what its test returns, and would
// otherwise pass at once without running it (an Effect is no promise). Effects are never awaited by Effect
// itself (it runs them through its own runtime), so the extra `then` changes nothing for it.
const finished = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Object.assign(Object.create(Effectable.CommitPrototype), {
    commit: () => effect,
    // biome-ignore lint/suspicious/noThenProperty: so that awaiting the step rejects instead of passing.
    then: (_resolve: unknown, reject?: (reason: unknown) => void) => reject?.(awaitedFinished()),
  })

/**
 * Starts a specification for a decider: `DeciderSpecification.for(decider).given(events).when(command)`
 * followed by `.then(events)` or `.thenFails(error)`. Each ends in an Effect, for `it.effect`; the command
 * runs with the test's Clock, so `TestClock` controls every timestamp.
 */
const forDecider = <Command, Event, State, Err>(
  decider: Decider<Command, Event, State, Err>,
): Specification<Command, Event, Err> => ({
  given: (history) => ({
    when: (command) => {
      const run = Effect.suspend(() => decider.decide(command, fold(decider, history))).pipe(Effect.exit)

      // Refused with an error that `matches`; `expected` is what a failure shows beside what came instead.
      const refusedAs = (matches: (refusal: Err) => boolean, expected: unknown) =>
        Effect.flatMap(run, (exit) => {
          if (Exit.isSuccess(exit)) {
            return Effect.die(
              new SpecificationFailure(
                "expected the command to be refused, but it succeeded",
                exit.value,
                expected,
              ),
            )
          }
          const refusal = Cause.failureOption(exit.cause)
          if (Option.isNone(refusal)) return Effect.failCause(exit.cause as Cause.Cause<never>)
          if (!matches(refusal.value)) {
            return Effect.die(
              new SpecificationFailure("the command was refused with another error", refusal.value, expected),
            )
          }
          return Effect.void
        })

      // `expected` is what the failure shows beside a refusal: the events the step expected, when it names them.
      const expectEvents = (check: (events: ReadonlyArray<Event>) => void, expected: unknown = "events") =>
        Effect.flatMap(run, (exit) => {
          if (Exit.isSuccess(exit)) return Effect.sync(() => check(exit.value))
          const refusal = Cause.failureOption(exit.cause)
          if (Option.isSome(refusal)) {
            return Effect.die(
              new SpecificationFailure(
                `expected events, but the command was refused with ${describe(refusal.value)}`,
                refusal.value,
                expected,
              ),
            )
          }
          return Effect.failCause(exit.cause as Cause.Cause<never>)
        })

      const steps: Then<Event, Err> = {
        // `then` is the name every given/when/then kit uses; the object is never awaited, only its Effects are.
        // A runner that awaits it (a specification left without its last step, returned from a plain `it`) calls
        // `then(resolve, reject)`: it is told so at once instead of waiting forever.
        // biome-ignore lint/suspicious/noThenProperty: the specification's last step is called `then` on purpose.
        then: (expected: ReadonlyArray<Event>, ...awaited: ReadonlyArray<unknown>) => {
          const reject = awaited[0]
          if (typeof expected === "function" && typeof reject === "function") {
            reject(unfinished())
            return Effect.void
          }
          return finished(
            expectEvents((actual) => {
              if (!structurallyEqual(actual, expected)) {
                throw new SpecificationFailure(
                  "the command produced other events than expected",
                  actual,
                  expected,
                )
              }
            }, expected),
          )
        },
        thenNothingHappens: () =>
          finished(
            expectEvents((actual) => {
              if (actual.length > 0) throw new SpecificationFailure("expected no events", actual, [])
            }, []),
          ),
        thenEvents: (assert) => finished(expectEvents(assert)),
        thenBreaksInvariant: (messagePart) =>
          finished(
            Effect.flatMap(
              // The history itself may be corrupt: folding it is part of what must break.
              Effect.exit(Effect.suspend(() => decider.decide(command, fold(decider, history)))),
              (exit) => {
                const defect = Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()
                if (Option.isSome(defect) && defect.value instanceof InvariantViolation) {
                  return messagePart === undefined || defect.value.message.includes(messagePart)
                    ? Effect.void
                    : Effect.die(
                        new SpecificationFailure(
                          "another invariant broke",
                          defect.value.message,
                          messagePart,
                        ),
                      )
                }
                const outcome = Exit.isSuccess(exit)
                  ? { events: exit.value }
                  : Option.match(Cause.failureOption(exit.cause), {
                      onSome: (refusal) => ({ refused: refusal }),
                      onNone: () => ({ died: Cause.pretty(exit.cause) }),
                    })
                return Effect.die(
                  new SpecificationFailure(
                    Exit.isSuccess(exit)
                      ? "expected an InvariantViolation, but the command succeeded"
                      : "expected an InvariantViolation, but the command failed otherwise",
                    outcome,
                    "InvariantViolation",
                  ),
                )
              },
            ),
          ),
        thenFails: (expected) =>
          finished(refusedAs((refusal) => structurallyEqual(refusal, expected), expected)),
        thenFailsWithCode: (code) =>
          finished(refusedAs((refusal) => (refusal as { readonly code?: unknown }).code === code, code)),
      }
      // Nor is the object meant to run as an Effect. Its type is no Effect, so the compiler refuses it where one
      // is expected, but vitest runs test files unchecked: returned from `it.effect` or yielded in `Effect.gen`,
      // it would die with "Not a valid effect". So at run time it is an Effect, Effect's supported way
      // (`Effectable.CommitPrototype`: running it runs `commit`), that dies saying how to finish it. The steps
      // and the Effects they return are unchanged.
      return Object.assign(Object.create(Effectable.CommitPrototype), steps, {
        commit: () => Effect.die(unfinished()),
      })
    },
  }),
})

/** Given/when/then specifications for deciders, in the style of Emmett's `DeciderSpecification`. */
export const DeciderSpecification = { for: forDecider }

/** Folds a stream of events through a decider's `evolve` and returns the resulting state. */
export const replay = <Command, Event, State, Err>(
  decider: Decider<Command, Event, State, Err>,
  events: Iterable<Event>,
): State => fold(decider, events)

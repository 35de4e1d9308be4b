import { SqlError } from "@effect/sql"
import { DuplicateReferenceId } from "@points/domain"
import { Effect } from "effect"
import {
  type Decision,
  decideAndAppend,
  type Outcome,
  type States,
} from "../event-store/decide-and-append.js"
import type { AppendContext } from "../event-store/recorded-event.js"
import type { AnyStreamHandle } from "../event-store/stream-handle.js"
import { StreamVersionConflict } from "../event-store/stream-version-conflict.js"

/**
 * What a unit of work can fail with besides its decision's refusals: the database (SqlError), a stream still
 * contended after every retry (StreamVersionConflict, transient: worth retrying later), and a reference id
 * taken by a record the reservation stream did not know of (LE0006, from the read models' unique indexes).
 */
export type UnitOfWorkError = SqlError.SqlError | StreamVersionConflict | DuplicateReferenceId

// Marks the decision's own refusals, so that they are told apart from the store's failures whatever they are.
class Refusal<X> {
  constructor(readonly error: X) {}
}

/**
 * `decideAndAppend` with its failures typed: the decision's refusals as they are, the store's as
 * UnitOfWorkError. Anything else (a stream that does not decode, a broken invariant) is a defect.
 */
export const runUnitOfWork = <Streams extends Record<string, AnyStreamHandle>, X, R>(
  streams: Streams,
  decide: (states: States<Streams>) => Effect.Effect<Decision<Streams>, X, R>,
  context: AppendContext,
) =>
  decideAndAppend(
    streams,
    (states) => Effect.mapError(decide(states), (error) => new Refusal(error)),
    context,
  ).pipe(
    Effect.catchAll((error: unknown): Effect.Effect<never, X | UnitOfWorkError> => {
      if (error instanceof Refusal) return Effect.fail(error.error as X)
      if (
        error instanceof SqlError.SqlError ||
        error instanceof StreamVersionConflict ||
        error instanceof DuplicateReferenceId
      ) {
        return Effect.fail(error)
      }
      return Effect.die(error)
    }),
  ) satisfies Effect.Effect<Outcome<Streams>, X | UnitOfWorkError, unknown>

import { SqlClient } from "@effect/sql"
import { DateTime, Effect } from "effect"
import {
  type AppendedRow,
  type AppendRequest,
  type AppendResult,
  appendCall,
  appendFunctionCall,
  appendResultOf,
} from "./append-to-stream.js"
import type { StreamVersionConflict } from "./stream-version-conflict.js"

// One call of the append function per stream, in one statement: `SELECT n, * FROM f(...) UNION ALL ...`.
const statementFor = (calls: ReadonlyArray<{ readonly params: ReadonlyArray<unknown> }>) => {
  let first = 1
  return calls
    .map((call, n) => {
      const text = `SELECT ${n} AS call, * FROM ${appendFunctionCall(first, call.params.length === 15)}`
      first += call.params.length
      return text
    })
    .join(" UNION ALL ")
}

/**
 * Appends to several streams in one round trip, each at its expected version as `appendToStream` does. When
 * one stream fails its expectation (StreamVersionConflict), the others may already be written: run it in a
 * transaction that the failure rolls back (the unit of work does). Every request must have events.
 */
export const appendToStreams = <Event>(requests: ReadonlyArray<AppendRequest<Event>>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* DateTime.now
    const calls = requests.map((request) => appendCall(request, now))
    const rows = yield* sql.unsafe<AppendedRow & { readonly call: number }>(
      statementFor(calls),
      calls.flatMap((call) => call.params),
    )
    return yield* Effect.forEach(
      requests,
      (request, n): Effect.Effect<AppendResult<Event>, StreamVersionConflict> =>
        appendResultOf(
          request,
          calls[n] ?? { eventIds: [], types: [] },
          rows.filter((row) => row.call === n),
          now,
        ),
    )
  })

import { SqlClient } from "@effect/sql"
import { DateTime, Effect } from "effect"
import {
  type AppendedRow,
  type AppendRequest,
  type AppendResult,
  appendCall,
  appendResultOf,
} from "./append-to-stream.js"
import type { StreamVersionConflict } from "./stream-version-conflict.js"

const PARAMS_PER_APPEND = 15

// One call of the append function per stream, in one statement: `SELECT n, f(...) UNION ALL ...`.
const statementFor = (count: number) =>
  Array.from({ length: count }, (_, n) => {
    const base = n * PARAMS_PER_APPEND
    const params = Array.from({ length: PARAMS_PER_APPEND }, (_, i) => `$${base + i + 1}`)
    params[PARAMS_PER_APPEND - 1] = `${params[PARAMS_PER_APPEND - 1]}::jsonb`
    return `SELECT ${n} AS call, * FROM append_to_stream(${params.join(", ")})`
  }).join(" UNION ALL ")

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
      statementFor(requests.length),
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

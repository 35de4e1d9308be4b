import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { FIRST_EVENT_AFTER, hasEventsAfter, logStart, readLogHead } from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"

const EVENTS = 200_000

// A log of its own (no consumer here decodes it): rows written straight into the tables, many of them, so
// that PostgreSQL plans as it would on a real log.
const fillLog = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const partnerId = newId()
  const streamId = `ledger-${newId()}`
  yield* sql`INSERT INTO streams (stream_id, category, partner_id, version)
             VALUES (${streamId}, 'ledger', ${partnerId}, ${EVENTS})`
  yield* sql`
    INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, partner_id,
                        occurred_at)
    SELECT ${streamId}, n, gen_random_uuid(), 'Filler', 1, '{}'::jsonb, ${partnerId}, now()
    FROM generate_series(1, ${EVENTS}::int) AS n`
  yield* sql`ANALYZE events`
})

layer(testDatabase(), { excludeTestServices: true, timeout: "120 seconds" })("hasEventsAfter", (it) => {
  it.effect("tells whether events lie ahead with an index-only scan, never a scan of the whole log", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* fillLog
      const head = yield* readLogHead
      expect(yield* hasEventsAfter(head)).toBe(false)
      expect(yield* hasEventsAfter(logStart)).toBe(true)
      // The plan PostgreSQL caches for the statement (generic, as for every prepared statement): an index scan
      // of the log in commit order, stopped at its first row. `SELECT EXISTS (...)` was planned as a
      // sequential scan, which reads the whole log when nothing lies ahead (a caught-up consumer).
      const plan = yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SET LOCAL plan_cache_mode = force_generic_plan`
          return yield* sql.unsafe(`EXPLAIN (FORMAT JSON) ${FIRST_EVENT_AFTER}`, [
            String(head.transactionId),
            String(head.globalPosition),
          ])
        }),
      )
      const text = JSON.stringify(plan)
      expect(text).toContain('"Index Name":"events_commit_order"')
      expect(text).not.toContain("Seq Scan")
    }),
  )
})

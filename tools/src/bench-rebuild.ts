// Rebuild benchmark: seeds an embedded PostgreSQL (in a temporary directory, never DATABASE_URL's server) with
// a realistic event log written in bulk, then times rebuildReadModels, which truncates every read model and
// rewrites it from the whole log. Target >= 20,000 events/s. BENCH_EVENTS sets the log's size (200,000);
// BENCH_RUNS how many rebuilds to time (3, the median is reported). The last line is the JSON figure.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient, type SqlError } from "@effect/sql"
import type { PartnerId } from "@points/domain"
import { DatabaseLive, rebuildReadModels } from "@points/infrastructure"
import { DateTime, Effect, Fiber } from "effect"
import {
  appendStreamsInBulk,
  EVENTS_PER_USER,
  partnerStreams,
  seedMix,
  seedPartnerId,
  userStreams,
} from "./rebuild-seed.js"

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const PARTNERS = 10
const USERS_PER_APPEND = 40

const seed = Effect.gen(function* () {
  const start = DateTime.unsafeMake(Date.UTC(2026, 0, 1))
  const partners = Array.from({ length: PARTNERS }, seedPartnerId)
  let written = yield* appendStreamsInBulk(partners.flatMap((partnerId) => partnerStreams(partnerId, start)))
  const users = Math.max(1, Math.round((EVENTS - written) / EVENTS_PER_USER))
  // The next chunk is generated while the previous one is inserted.
  let inserting: Fiber.Fiber<number, SqlError.SqlError> | null = null
  for (let first = 0; first < users; first += USERS_PER_APPEND) {
    const streams = []
    for (let n = first; n < Math.min(users, first + USERS_PER_APPEND); n++) {
      streams.push(...userStreams(partners[n % PARTNERS] as PartnerId, DateTime.add(start, { minutes: n })))
    }
    if (inserting !== null) written += yield* Fiber.join(inserting)
    inserting = yield* Effect.fork(appendStreamsInBulk(streams))
  }
  if (inserting !== null) written += yield* Fiber.join(inserting)
  return { events: written, users }
})

const bench = Effect.gen(function* () {
  const seedStarted = performance.now()
  const seeded = yield* seed
  const sql = yield* SqlClient.SqlClient
  yield* sql`VACUUM ANALYZE events`
  console.log(
    `seeded ${seeded.events.toLocaleString("en")} events for ${seeded.users.toLocaleString("en")} users of ` +
      `${PARTNERS} partners in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s (${seedMix})`,
  )
  const rates: Array<number> = []
  for (let run = 1; run <= RUNS; run++) {
    const result = yield* rebuildReadModels({ batchSize: 5_000 })
    rates.push(result.eventsPerSecond)
    const rows = Object.entries(result.rows)
      .map(([table, count]) => `${table} ${count.toLocaleString("en")}`)
      .join(", ")
    console.log(
      `rebuild ${run}: ${result.events.toLocaleString("en")} events (${result.foldedEvents.toLocaleString("en")} ` +
        `folded, the rest reservations), ${result.streams.toLocaleString("en")} streams in ` +
        `${result.seconds.toFixed(2)} s = ${result.eventsPerSecond.toLocaleString("en")} events/s, ` +
        `${Math.round(result.foldedEvents / result.seconds).toLocaleString("en")} folded events/s (${rows})`,
    )
  }
  rates.sort((a, b) => a - b)
  const median = rates[Math.floor(rates.length / 2)] ?? 0
  console.log(JSON.stringify({ name: "rebuild", events: seeded.events, events_per_s: median }))
})

// An embedded server in a temporary directory, whatever DATABASE_URL says: a rebuild truncates the read models.
const dataDir = await mkdtemp(join(tmpdir(), "points-bench-rebuild-"))
delete process.env.DATABASE_URL
process.env.DATA_DIR = dataDir
try {
  await Effect.runPromise(Effect.provide(bench, DatabaseLive))
} finally {
  await rm(dataDir, { recursive: true, force: true })
}

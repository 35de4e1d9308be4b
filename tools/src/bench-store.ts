// Event store benchmark: how close appendToStream comes to the database's plain insert rate. For BENCH_SECONDS
// (15) each, 16 writers append single events to streams of their own (NoStream for a stream's first event,
// Exact after), and the same 16 writers insert an equivalent row into a plain table: same server, same pool of
// 16, same durability, same client-side work (event encoding, a UUID v7 per event). Each phase is warmed up
// first; its time is split into BENCH_ROUNDS (3) rounds alternating with the other's, so that drift (other load
// on the machine, growing tables) weighs on both alike, and each round starts from a checkpoint, so neither
// pays for the other's dirty pages. Target: ratio >= 0.7. Prints one line per figure, the JSON result last.
import { SqlClient } from "@effect/sql"
import { AccountId, Ledger, Points, PointsBalance, ReferenceId, TransactionId, UserId } from "@points/domain"
import { type AppendContext, appendToStream, ExpectedVersion, ledgerStream } from "@points/infrastructure"
import { DateTime, Effect } from "effect"
import { uuidv7 as uuidV7 } from "uuidv7"
import { integerSetting, onEmbeddedDatabase } from "./bench-setup.js"

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15)
if (!(Number.isFinite(SECONDS) && SECONDS > 0 && SECONDS <= 600)) {
  throw new Error(`BENCH_SECONDS must be a number of seconds from 1 to 600, not ${process.env.BENCH_SECONDS}`)
}
const WARM_UP_SECONDS = Math.min(3, Math.max(1, SECONDS / 5))
/** Each phase's time is split into this many rounds, alternating append and insert rounds. */
const ROUNDS = integerSetting("BENCH_ROUNDS", 3, 100)
const WRITERS = 16
/** Events per stream before a writer starts a new one: a new stream every tenth append. */
const STREAM_LENGTH = 10

/** A points movement, as an API request would append it. */
const pointsAdded = (userId: string, balance: number, at: DateTime.Utc) =>
  Ledger.PointsAdded.make({
    transactionId: TransactionId.make(uuidV7()),
    accountId: AccountId.make(userId),
    userId: UserId.make(userId),
    amount: Points.make(10),
    balanceAfter: PointsBalance.make(balance),
    referenceId: ReferenceId.make(`bench-${uuidV7()}`),
    description: "benchmark",
    at,
  })

const contextFor = (partnerId: string): AppendContext => ({
  partnerId,
  requestId: `req-${uuidV7()}`,
  idempotencyKey: null,
  causationId: null,
  correlationId: null,
})

/** A writer: one operation at a time, with state of its own (its stream and version) kept across rounds. */
type Writer<E, R> = (n: number) => Effect.Effect<void, E, R>

/** A writer appending single events to its own streams, a new stream every STREAM_LENGTH events. */
const appendingWriter = (): Writer<unknown, SqlClient.SqlClient> => {
  const partnerId = uuidV7()
  let userId = uuidV7()
  let version = 0n
  return () =>
    Effect.gen(function* () {
      if (version === BigInt(STREAM_LENGTH)) {
        userId = uuidV7()
        version = 0n
      }
      const at = yield* DateTime.now
      const result = yield* appendToStream({
        streamId: ledgerStream(userId).streamId,
        expected: version === 0n ? ExpectedVersion.NoStream() : ExpectedVersion.Exact({ version }),
        events: [pointsAdded(userId, Number(version + 1n) * 10, at)],
        catalog: Ledger.ledgerEvents,
        context: contextFor(partnerId),
      })
      version = result.nextVersion
    })
}

/** A writer inserting the row an append would write into a plain table, with the same client-side work. */
const insertingWriter = (): Writer<unknown, SqlClient.SqlClient> => {
  const partnerId = uuidV7()
  let userId = uuidV7()
  let version = 0
  return () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      if (version === STREAM_LENGTH) {
        userId = uuidV7()
        version = 0
      }
      const at = yield* DateTime.now
      const stored = Ledger.ledgerEvents.encode(pointsAdded(userId, (version + 1) * 10, at))
      const context = contextFor(partnerId)
      yield* sql.unsafe(
        `INSERT INTO baseline_events (stream_id, stream_version, event_id, event_type, schema_version, data,
                                      partner_id, request_id, idempotency_key, causation_id, correlation_id,
                                      occurred_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12)`,
        [
          ledgerStream(userId).streamId,
          version + 1,
          uuidV7(),
          stored.type,
          stored.version,
          JSON.stringify(stored.data),
          partnerId,
          context.requestId,
          context.idempotencyKey,
          context.causationId,
          context.correlationId,
          DateTime.toDate(at),
        ],
      )
      version++
    })
}

/** What a phase measured: operations, seconds, and every operation's latency in milliseconds. */
interface Measured {
  operations: number
  seconds: number
  readonly latencies: Array<number>
}

/**
 * Runs every writer concurrently for `seconds` (a loop bounded by time), and adds what they did to `into`
 * unless it is a warm-up. Starts from a checkpoint, so a phase never pays for the dirty pages of the other.
 */
const runFor = <E, R>(writers: ReadonlyArray<Writer<E, R>>, seconds: number, into: Measured | null) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CHECKPOINT`
    const started = performance.now()
    const deadline = started + seconds * 1000
    const counts = yield* Effect.all(
      writers.map((operation) =>
        Effect.gen(function* () {
          let operations = 0
          while (performance.now() < deadline) {
            const begun = performance.now()
            yield* operation(operations)
            into?.latencies.push(performance.now() - begun)
            operations++
          }
          return operations
        }),
      ),
      { concurrency: "unbounded" },
    )
    if (into !== null) {
      into.operations += counts.reduce((sum, n) => sum + n, 0)
      into.seconds += (performance.now() - started) / 1000
    }
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

/** Prints one phase's figures and returns its rate in operations per second. */
const report = (label: string, measured: Measured) => {
  const latencies = measured.latencies.sort((a, b) => a - b)
  const rate = measured.operations / measured.seconds
  console.log(
    `${label}: ${Math.round(rate).toLocaleString("en")}/s (${measured.operations.toLocaleString("en")} in ` +
      `${measured.seconds.toFixed(1)} s; latency p50 ${percentile(latencies, 0.5).toFixed(2)} ms, ` +
      `p99 ${percentile(latencies, 0.99).toFixed(2)} ms)`,
  )
  return rate
}

const benchmark = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const settings = yield* sql<{ name: string; setting: string }>`
    SELECT name, setting FROM pg_settings
    WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'wal_level', 'shared_buffers', 'full_page_writes')
    ORDER BY name`
  console.log(`server: ${settings.map((s) => `${s.name}=${s.setting}`).join(", ")}`)
  console.log(
    `${WRITERS} writers, pool of ${WRITERS}, ${SECONDS} s per phase in ${ROUNDS} alternating rounds, after a ` +
      `${WARM_UP_SECONDS} s warm-up each; one event per statement, autocommit; a new stream every ` +
      `${STREAM_LENGTH} events`,
  )
  // The row of `events` without the store's indexes and constraints: what a plain table costs.
  yield* sql`
    CREATE TABLE baseline_events (
      global_position  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      stream_id        text NOT NULL,
      stream_version   bigint NOT NULL,
      event_id         uuid NOT NULL,
      event_type       text NOT NULL,
      schema_version   integer NOT NULL,
      data             jsonb NOT NULL,
      partner_id       uuid NOT NULL,
      request_id       text,
      idempotency_key  text,
      causation_id     text,
      correlation_id   text,
      occurred_at      timestamptz NOT NULL
    )`
  const appenders = Array.from({ length: WRITERS }, appendingWriter)
  const inserters = Array.from({ length: WRITERS }, insertingWriter)
  yield* runFor(appenders, WARM_UP_SECONDS, null)
  yield* runFor(inserters, WARM_UP_SECONDS, null)
  const appended: Measured = { operations: 0, seconds: 0, latencies: [] }
  const inserted: Measured = { operations: 0, seconds: 0, latencies: [] }
  // Alternating rounds, so that drift (other load on the machine, tables growing) weighs on both alike.
  for (let round = 0; round < ROUNDS; round++) {
    yield* runFor(appenders, SECONDS / ROUNDS, appended)
    yield* runFor(inserters, SECONDS / ROUNDS, inserted)
  }
  const appends = report("appendToStream", appended)
  const inserts = report("plain INSERT (baseline)", inserted)
  const ratio = Math.round((appends / inserts) * 100) / 100
  console.log(`ratio: ${ratio} (target >= 0.7)`)
  console.log(
    JSON.stringify({
      name: "store",
      appends_per_s: Math.round(appends),
      baseline_inserts_per_s: Math.round(inserts),
      ratio,
    }),
  )
})

await onEmbeddedDatabase("store", WRITERS, benchmark)

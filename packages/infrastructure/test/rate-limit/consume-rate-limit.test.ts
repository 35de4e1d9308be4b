import { Reactivity } from "@effect/experimental"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Schedule } from "effect"
import { consumeRateLimit, databaseAt } from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"

/** The key's state as stored: its theoretical arrival time, as microseconds since the epoch. */
const storedTat = (key: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ tat: string }>`
      SELECT (extract(epoch FROM tat) * 1000000)::bigint::text AS tat FROM rate_limits WHERE key = ${key}`,
  ).pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => BigInt(row.tat))))

/** Moves a key's state back by `seconds`: exactly what that much time passing does to it. */
const letTimePass = (key: string, seconds: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE rate_limits SET tat = tat - ${seconds} * interval '1 second' WHERE key = ${key}`,
  )

const databaseClock = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ now: string }>`SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text AS now`,
).pipe(Effect.map((rows) => BigInt(rows[0]?.now ?? "0")))

const consumeMany = (key: string, n: number, policy: { ratePerSecond: number; burst: number }) =>
  Effect.forEach(Array.from({ length: n }), () => consumeRateLimit(key, policy))

layer(testDatabase({ poolSize: 20 }), { excludeTestServices: true })("consumeRateLimit", (it) => {
  it.effect(
    "keeps its state in an UNLOGGED table (no WAL, so no flush at commit), which it still reads and writes",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const key = `partner:${newId()}`
        yield* consumeRateLimit(key, { ratePerSecond: 10, burst: 10 })
        const [table] = yield* sql<{ persistence: string }>`
        SELECT relpersistence AS persistence FROM pg_class WHERE relname = 'rate_limits'`
        expect(table?.persistence).toBe("u")
        const [row] = yield* sql<{
          found: number
        }>`SELECT count(*)::int AS found FROM rate_limits WHERE key = ${key}`
        expect(row?.found).toBe(1)
      }),
  )

  it.effect("allows the burst, then refuses with a Retry-After of one emission interval", () =>
    Effect.gen(function* () {
      const key = `partner:${newId()}`
      // 0.1 request/s: T = 10 s, so nothing refills while the test runs.
      const policy = { ratePerSecond: 0.1, burst: 3 }
      const allowed = yield* consumeMany(key, 3, policy)
      expect(allowed.map((d) => [d.allowed, d.limit, d.remaining])).toEqual([
        [true, 3, 2],
        [true, 3, 1],
        [true, 3, 0],
      ])
      expect(allowed.map((d) => d.retryAfterSeconds)).toEqual([0, 0, 0])
      expect(allowed[0]?.resetSeconds).toBe(10)
      expect(allowed[2]?.resetSeconds).toBe(30)
      const refused = yield* consumeRateLimit(key, policy)
      expect(refused).toEqual({
        allowed: false,
        limit: 3,
        remaining: 0,
        resetSeconds: 30,
        retryAfterSeconds: 10,
      })
    }),
  )

  it.effect("a refused request consumes nothing", () =>
    Effect.gen(function* () {
      const key = `partner:${newId()}`
      // 0.1 request/s: T = 10 s, so nothing refills on its own while the test runs, however slow the machine.
      const policy = { ratePerSecond: 0.1, burst: 2 }
      yield* consumeMany(key, 2, policy)
      const full = yield* storedTat(key)
      const refused = yield* consumeMany(key, 20, policy)
      expect(refused.every((d) => !d.allowed)).toBe(true)
      expect(yield* storedTat(key)).toEqual(full)
      // Exactly one emission interval later one request fits, and only one: the refusals took nothing.
      yield* letTimePass(key, 10)
      const after = yield* consumeMany(key, 2, policy)
      expect(after.map((d) => d.allowed)).toEqual([true, false])
    }),
  )

  it.effect("refills at the sustained rate up to the burst, never beyond", () =>
    Effect.gen(function* () {
      const key = `partner:${newId()}`
      // T = 10 s: only letTimePass refills the bucket while the test runs.
      const policy = { ratePerSecond: 0.1, burst: 5 }
      expect((yield* consumeMany(key, 6, policy)).map((d) => d.allowed)).toEqual([
        ...Array(5).fill(true),
        false,
      ])
      yield* letTimePass(key, 20)
      expect((yield* consumeMany(key, 3, policy)).map((d) => d.allowed)).toEqual([true, true, false])
      // Ten hours of quiet give the burst back, not 3600 requests.
      yield* letTimePass(key, 36_000)
      const rested = yield* consumeMany(key, 6, policy)
      expect(rested.map((d) => d.allowed)).toEqual([...Array(5).fill(true), false])
      expect(rested[0]?.remaining).toBe(4)
    }),
  )

  it.effect("refills in real time on the database clock", () =>
    Effect.gen(function* () {
      const key = `client:${newId()}`
      // One request per second, no burst beyond it: long enough that the second request, right after the
      // first, is refused even on a slow machine.
      const policy = { ratePerSecond: 1, burst: 1 }
      const before = yield* databaseClock
      expect((yield* consumeRateLimit(key, policy)).allowed).toBe(true)
      const refused = yield* consumeRateLimit(key, policy)
      expect(refused.allowed).toBe(false)
      expect(refused.retryAfterSeconds).toBe(1)
      // Polling is safe: a refusal consumes nothing. Bounded at 10 s (the refill takes 1 s).
      const next = yield* consumeRateLimit(key, policy).pipe(
        Effect.filterOrFail((d) => d.allowed),
        Effect.retry(Schedule.spaced("20 millis")),
        Effect.timeout("10 seconds"),
      )
      const after = yield* databaseClock
      expect(next.allowed).toBe(true)
      expect(after - before).toBeGreaterThanOrEqual(1_000_000n)
    }),
  )

  it.effect("keys are independent", () =>
    Effect.gen(function* () {
      const policy = { ratePerSecond: 0.01, burst: 2 }
      const a = `partner:${newId()}`
      const b = `partner:${newId()}`
      expect((yield* consumeMany(a, 3, policy)).map((d) => d.allowed)).toEqual([true, true, false])
      expect((yield* consumeMany(b, 3, policy)).map((d) => d.allowed)).toEqual([true, true, false])
    }),
  )

  it.effect(
    "a key's clock never runs backwards: a request that read the clock before the previous decision",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const key = `partner:${newId()}`
        const policy = { ratePerSecond: 1, burst: 2 }
        // As a request that read the clock, then queued on the row behind one decided 10 s later than that
        // reading (white box: the row as that decision left it, half a request outstanding at its time).
        yield* sql`
        INSERT INTO rate_limits (key, tat, last_allowed, decided_at)
        VALUES (${key}, clock_timestamp() + interval '10.5 seconds', true, clock_timestamp() + interval '10 seconds')`
        const decision = yield* consumeRateLimit(key, policy)
        // Decided at the later time: half a request outstanding, so allowed, with nothing left after it.
        expect(decision).toMatchObject({ allowed: true, remaining: 0 })
        const [row] = yield* sql<{ ahead: boolean }>`
        SELECT decided_at >= clock_timestamp() + interval '9 seconds' AS ahead FROM rate_limits WHERE key = ${key}`
        expect(row?.ahead).toBe(true)
      }),
  )

  it.effect(
    "two API processes (two pools) share one limit: 60 concurrent requests, exactly the burst pass",
    () =>
      Effect.gen(function* () {
        const url = (yield* PgClient.PgClient).config.url
        if (url === undefined) return expect.unreachable()
        // A second pool on the same database, as another API process would have.
        const other = yield* Layer.build(
          databaseAt(url, { poolSize: 10 }).pipe(Layer.provide(Reactivity.layer)),
        )
        const key = `partner:${newId()}`
        const policy = { ratePerSecond: 0.001, burst: 10 }
        const decisions = yield* Effect.all(
          Array.from({ length: 60 }, (_, n) =>
            n % 2 === 0
              ? consumeRateLimit(key, policy)
              : consumeRateLimit(key, policy).pipe(Effect.provide(other)),
          ),
          { concurrency: "unbounded" },
        )
        expect(decisions.filter((d) => d.allowed)).toHaveLength(10)
        expect(
          decisions
            .filter((d) => d.allowed)
            .map((d) => d.remaining)
            .sort((x, y) => x - y),
        ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
      }).pipe(Effect.scoped),
  )

  it.effect("refuses a policy that is not a positive rate and burst", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.exit(consumeRateLimit("k", { ratePerSecond: 0, burst: 1 }))
      expect(bad._tag === "Failure" && String(bad.cause)).toContain("ratePerSecond")
      const noBurst = yield* Effect.exit(consumeRateLimit("k", { ratePerSecond: 1, burst: 0.5 }))
      expect(noBurst._tag === "Failure" && String(noBurst.cause)).toContain("burst")
    }),
  )
})

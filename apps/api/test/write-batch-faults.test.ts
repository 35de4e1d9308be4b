import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { lockWaiters, testDatabase } from "@points/infrastructure/testing"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { uuidv7 as uuidV7 } from "uuidv7"
import { activeUserAt, callAt, eventually, newPartnerAt, type Reply } from "./harness.js"
import { killProcess, listeningProcess, processSettings, testDatabaseUrl } from "./processes.js"
import { tcpProxy } from "./tcp-proxy.js"

const REQUESTS = 80

/**
 * An API process (the rate limit out of the way) with a partner and an active user: where it listens, how to
 * start it again, the process, the token and the user. `databaseUrl` rewrites the URL the process is given
 * (to route it through a proxy).
 */
const processWithUser = (partner: string, databaseUrl: (url: string) => string = (url) => url) =>
  Effect.gen(function* () {
    const settings = yield* processSettings({
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
    })
    const { base } = settings
    const env = { ...settings.env, DATABASE_URL: databaseUrl(settings.env.DATABASE_URL ?? "") }
    const start = listeningProcess(env, base)
    const api = yield* start
    const { token } = yield* newPartnerAt(base, partner)
    const userId = yield* activeUserAt(base, token, `${partner}-user`, 30)
    return { base, start, api, token, userId }
  })

/** REQUESTS adds to one account, amounts 1..REQUESTS, each with its own Idempotency-Key and reference id. */
const movementsOf = (userId: string, prefix: string) =>
  Array.from({ length: REQUESTS }, (_, n) => ({
    key: `${prefix}-${n}-${uuidV7()}`,
    json: { transaction: { user_id: userId, amount: n + 1, reference_id: `${prefix}-ref-${n}` } },
  }))

type Movement = ReturnType<typeof movementsOf>[number]

const sender = (base: string, token: string) => (movement: Movement) =>
  callAt(base, "POST", "/api/points/add", {
    token,
    json: movement.json,
    headers: { "idempotency-key": movement.key },
  })

/**
 * Sends every movement at once and runs `fault` as soon as the first answer (a 201) arrives, with the batches
 * after it in flight; the answer each got (a 201, or undefined for anything else).
 */
const sendAllWithFaultAtFirstAnswer = <E>(
  movements: ReadonlyArray<Movement>,
  send: ReturnType<typeof sender>,
  fault: Effect.Effect<void, E>,
) =>
  Effect.gen(function* () {
    const answered = yield* Deferred.make<void>()
    const round = yield* Effect.fork(
      Effect.forEach(
        movements,
        (movement) =>
          Effect.exit(send(movement)).pipe(
            Effect.tap((exit) =>
              Exit.isSuccess(exit) && exit.value.status === 201
                ? Deferred.succeed(answered, undefined)
                : Effect.void,
            ),
          ),
        { concurrency: "unbounded" },
      ),
    )
    yield* Deferred.await(answered)
    yield* fault
    const exits = yield* Fiber.join(round)
    return exits.map((exit) => (Exit.isSuccess(exit) && exit.value.status === 201 ? exit.value : undefined))
  })

/**
 * After the fault, every movement was sent again with its key and answered 201: each answered before is
 * replayed as it was, and the account holds every movement exactly once (balance and reference ids).
 */
const expectEachExactlyOnce = (
  base: string,
  token: string,
  userId: string,
  before: ReadonlyArray<Reply | undefined>,
  retries: ReadonlyArray<Reply>,
) =>
  Effect.gen(function* () {
    expect(retries.map((reply) => reply.status)).toEqual(before.map(() => 201))
    for (const [n, reply] of before.entries()) {
      if (reply === undefined) continue
      expect(retries[n]?.headers.get("idempotent-replayed")).toBe("true")
      expect(retries[n]?.text).toBe(reply.text)
    }
    const account = yield* callAt(base, "GET", `/api/users/${userId}/points-account`, { token })
    expect(account.body.balance).toBe((REQUESTS * (REQUESTS + 1)) / 2)
    const references = new Set<string>()
    let cursor: string | null = null
    do {
      const page: { body: { data: Array<{ reference_id: string }>; next_cursor: string | null } } =
        yield* callAt(
          base,
          "GET",
          `/api/points/transactions?user_id=${userId}&limit=100${cursor === null ? "" : `&cursor=${cursor}`}`,
          { token },
        )
      for (const transaction of page.body.data) {
        expect(references.has(transaction.reference_id)).toBe(false)
        references.add(transaction.reference_id)
      }
      cursor = page.body.next_cursor
    } while (cursor !== null)
    expect(references.size).toBe(REQUESTS)
  })

layer(testDatabase({ poolSize: 2 }), { timeout: "240 seconds", excludeTestServices: true })(
  "Group commit across a killed process",
  (it) => {
    it.scoped(
      "an API process SIGKILLed with batches of movements in flight: every retry after a restart ends in exactly one effect",
      () =>
        Effect.gen(function* () {
          const { base, start, api: first, token, userId } = yield* processWithUser("Batch Ltd")
          const movements = movementsOf(userId, "batch")
          const send = sender(base, token)
          const before = yield* sendAllWithFaultAtFirstAnswer(movements, send, killProcess(first))
          const lost = before.filter((reply) => reply === undefined).length
          expect(lost).toBeGreaterThan(0)
          expect(lost).toBeLessThan(REQUESTS)

          // After a restart every request is sent again with its key: each ends in one transaction.
          yield* start
          const retries = yield* Effect.forEach(movements, send, { concurrency: 16 })
          yield* expectEachExactlyOnce(base, token, userId, before, retries)
        }),
    )

    it.scoped(
      "the database out of reach with batches of movements in flight: every retry once it is back ends in exactly one effect",
      () =>
        Effect.gen(function* () {
          const database = new URL(yield* testDatabaseUrl)
          const link = yield* tcpProxy(
            database.hostname,
            Number(database.port === "" ? "5432" : database.port),
          )
          const { base, token, userId } = yield* processWithUser("Outage Ltd", (url) => {
            const through = new URL(url)
            through.hostname = "127.0.0.1"
            through.port = String(link.port)
            return through.href
          })
          const movements = movementsOf(userId, "outage")
          const send = sender(base, token)
          // Every connection of the API's pool dropped at once, mid-batch: commits lost, or their answers.
          const before = yield* sendAllWithFaultAtFirstAnswer(
            movements,
            send,
            Effect.promise(() => link.cut()),
          )
          const lost = before.filter((reply) => reply === undefined).length
          expect(lost).toBeGreaterThan(0)
          expect(lost).toBeLessThan(REQUESTS)
          const outage = yield* Effect.forEach(movements.slice(0, 4), send)
          for (const reply of outage) {
            expect(reply.status).toBe(503)
            expect(reply.body.errors[0].code).toBe("SV5003")
            expect(reply.headers.get("retry-after")).toBe("2")
          }

          // Once the database is reachable again, every request is sent again with its key (again while the
          // pool finds its dropped connections: a 503 is retried, as a client would).
          yield* Effect.promise(() => link.restore())
          const retries = yield* Effect.forEach(
            movements,
            (movement) => eventually(send(movement), (reply) => reply.status !== 503, 30),
            { concurrency: 16 },
          )
          yield* expectEachExactlyOnce(base, token, userId, before, retries)
        }),
    )

    it.scoped(
      "an API process sent SIGTERM with movements in flight answers each one it took (no 500, none left hanging) and exits 0 within 10 s",
      () =>
        Effect.gen(function* () {
          const { base, start, api, token, userId } = yield* processWithUser("Stop Ltd")
          const answered = yield* Deferred.make<void>()
          const round = yield* Effect.fork(
            Effect.forEach(
              Array.from({ length: REQUESTS }, (_, n) => n),
              (n) =>
                Effect.exit(
                  callAt(base, "POST", "/api/points/add", {
                    token,
                    json: { transaction: { user_id: userId, amount: 1, reference_id: `stop-${n}` } },
                    headers: { "idempotency-key": `stop-${n}-${uuidV7()}` },
                  }),
                ).pipe(
                  Effect.tap((exit) =>
                    Exit.isSuccess(exit) && exit.value.status === 201
                      ? Deferred.succeed(answered, undefined)
                      : Effect.void,
                  ),
                  // A request the stopping server never took fails to connect; one it took must be answered.
                  Effect.timeout("15 seconds"),
                ),
              { concurrency: "unbounded" },
            ),
          )
          yield* Deferred.await(answered)
          api.child.kill("SIGTERM")
          const startedStopping = Date.now()
          const exitCode = yield* Effect.promise(() => api.exit)
          expect(exitCode).toBe(0)
          expect(Date.now() - startedStopping).toBeLessThan(10_000)
          const outcomes = yield* Fiber.join(round)
          // None timed out: each was answered or never reached the server. The rate limiter once stopped before
          // the server had drained: 500s, and requests that waited forever (the process with them, ~10 min).
          const statuses = outcomes.map((exit) =>
            Exit.isSuccess(exit) ? exit.value.status : "no connection",
          )
          expect(statuses.filter((status) => status !== 201 && status !== "no connection")).toEqual([])
          const created = statuses.filter((status) => status === 201).length
          expect(created).toBeGreaterThan(0)
          // Every 201 is one committed transaction, and nothing else was written.
          const restarted = yield* start
          const account = yield* callAt(base, "GET", `/api/users/${userId}/points-account`, { token })
          expect(account.body.balance).toBe(created)
          yield* killProcess(restarted)
        }),
    )

    it.scoped(
      "an API process whose database stalls while it stops exits within 10 s, and every write it cut off is applied once when sent again",
      () =>
        Effect.gen(function* () {
          const { base, start, api, token, userId } = yield* processWithUser("Stall Ltd")
          const sql = yield* SqlClient.SqlClient
          // The account's read model locked: every add waits on it, inside its batch's transaction.
          const locked = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const lock = yield* Effect.fork(
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`LOCK TABLE points_accounts IN ACCESS EXCLUSIVE MODE`
                yield* Deferred.succeed(locked, undefined)
                yield* Deferred.await(release)
              }),
            ),
          )
          yield* Deferred.await(locked)
          const movements = movementsOf(userId, "stall")
          const send = sender(base, token)
          const round = yield* Effect.fork(
            Effect.forEach(
              movements,
              (movement) => Effect.exit(send(movement).pipe(Effect.timeout("30 seconds"))),
              { concurrency: "unbounded" },
            ),
          )
          yield* eventually(lockWaiters, (waiting) => waiting > 0)
          api.child.kill("SIGTERM")
          const startedStopping = Date.now()
          const exitCode = yield* Effect.promise(() => api.exit)
          expect(Date.now() - startedStopping).toBeLessThan(10_000)
          expect(exitCode).toBe(1)
          expect(api.stdout()).toContain("did not stop within 9000 ms")
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(lock)
          const outcomes = yield* Fiber.join(round)
          // Nothing could commit while the lock was held: no request was answered 201.
          const before = outcomes.map((exit) =>
            Exit.isSuccess(exit) && exit.value.status === 201 ? exit.value : undefined,
          )
          expect(before.filter((reply) => reply !== undefined)).toEqual([])
          const restarted = yield* start
          const retries = yield* Effect.forEach(movements, send, { concurrency: 16 })
          yield* expectEachExactlyOnce(base, token, userId, before, retries)
          yield* killProcess(restarted)
        }),
    )
  },
)

import { expect, layer } from "@effect/vitest"
import { testDatabase } from "@points/infrastructure/testing"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { uuidv7 as uuidV7 } from "uuidv7"
import { activeUserAt, callAt, newPartnerAt } from "./harness.js"
import { killProcess, listeningProcess, processSettings } from "./processes.js"

const REQUESTS = 80

/**
 * An API process (the rate limit out of the way) with a partner and an active user: where it listens, how to
 * start it again, the process, the token and the user.
 */
const processWithUser = (partner: string) =>
  Effect.gen(function* () {
    const { base, env } = yield* processSettings({
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
    })
    const start = listeningProcess(env, base)
    const api = yield* start
    const { token } = yield* newPartnerAt(base, partner)
    const userId = yield* activeUserAt(base, token, `${partner}-user`, 30)
    return { base, start, api, token, userId }
  })

layer(testDatabase({ poolSize: 2 }), { timeout: "240 seconds", excludeTestServices: true })(
  "Group commit across a killed process",
  (it) => {
    it.scoped(
      "an API process SIGKILLed with batches of movements in flight: every retry after a restart ends in exactly one effect",
      () =>
        Effect.gen(function* () {
          const { base, start, api: first, token, userId } = yield* processWithUser("Batch Ltd")

          const requests = Array.from({ length: REQUESTS }, (_, n) => ({
            key: `batch-${n}-${uuidV7()}`,
            json: { transaction: { user_id: userId, amount: n + 1, reference_id: `batch-ref-${n}` } },
          }))
          const send = (request: (typeof requests)[number]) =>
            callAt(base, "POST", "/api/points/add", {
              token,
              json: request.json,
              headers: { "idempotency-key": request.key },
            })

          // Every request at once; the process is killed as soon as the first answer arrives, with the
          // batches after it in flight.
          const answered = yield* Deferred.make<void>()
          const firstRound = yield* Effect.fork(
            Effect.forEach(
              requests,
              (request) =>
                Effect.exit(send(request)).pipe(
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
          yield* killProcess(first)
          const before = yield* Fiber.join(firstRound)
          const answeredBefore = before.map((exit) =>
            Exit.isSuccess(exit) && exit.value.status === 201 ? exit.value : undefined,
          )
          const lost = answeredBefore.filter((reply) => reply === undefined).length
          expect(lost).toBeGreaterThan(0)
          expect(lost).toBeLessThan(REQUESTS)

          // After a restart every request is sent again with its key: each ends in one transaction.
          yield* start
          const retries = yield* Effect.forEach(requests, send, { concurrency: 16 })
          expect(retries.map((reply) => reply.status)).toEqual(requests.map(() => 201))
          for (const [n, reply] of answeredBefore.entries()) {
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
  },
)

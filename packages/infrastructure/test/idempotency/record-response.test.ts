import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { IdempotencyKeyInProgress } from "@points/domain"
import { Cause, Deferred, Effect, Exit, Fiber } from "effect"
import { ClaimLost, ClaimOutcome, claimKey, recordResponse } from "../../src/index.js"
import {
  age,
  claimOf,
  effectsOf,
  eventually,
  executeRequest,
  idempotencyTestDatabase,
  insertEffect,
  newKey,
  newPartner,
  response,
  rowOf,
} from "./key-fixtures.js"

const execute = (claim: ReturnType<typeof claimOf>) =>
  Effect.flatMap(claimKey(claim), (outcome) =>
    outcome._tag === "Execute" ? Effect.succeed(outcome.claimToken) : Effect.dieMessage("expected Execute"),
  )

// Live services: two tests wait on the database's clock (a real lease running out), polling with a deadline.
layer(idempotencyTestDatabase(), { excludeTestServices: true })("recordResponse", (it) => {
  it.effect("records a recordable error status (409) like a success, and replays it", () =>
    Effect.gen(function* () {
      const partnerId = newPartner()
      const key = newKey()
      const claimToken = yield* execute(claimOf(partnerId, key))
      const conflict = response(409, { code: "LE0006" })
      expect(yield* executeRequest({ partnerId, key, claimToken }, "refused", conflict)).toBe("Completed")
      expect(yield* claimKey(claimOf(partnerId, key))).toEqual(ClaimOutcome.Replay({ response: conflict }))
    }),
  )

  it.effect("releases the key on a status that is not recorded (422, 500): the same request runs again", () =>
    Effect.gen(function* () {
      for (const status of [422, 500, 503]) {
        const partnerId = newPartner()
        const key = newKey()
        const first = yield* execute(claimOf(partnerId, key))
        expect(yield* executeRequest({ partnerId, key, claimToken: first }, "try", response(status))).toBe(
          "Released",
        )
        expect(yield* rowOf({ partnerId, key })).toMatchObject({ state: "Released", response_status: null })
        const again = yield* claimKey(claimOf(partnerId, key))
        expect(again).toMatchObject({ _tag: "Execute", takeover: false })
        expect(again._tag === "Execute" && again.claimToken).not.toBe(first)
      }
    }),
  )

  it.effect("is harmless when redelivered with the same response", () =>
    Effect.gen(function* () {
      const partnerId = newPartner()
      const key = newKey()
      const claimToken = yield* execute(claimOf(partnerId, key))
      yield* executeRequest({ partnerId, key, claimToken }, "once")
      const sql = yield* SqlClient.SqlClient
      const again = yield* sql.withTransaction(
        recordResponse({ partnerId, key, claimToken, response: response(201, { note: "once" }) }),
      )
      expect(again).toBe("Completed")
      expect(yield* claimKey(claimOf(partnerId, key))).toEqual(
        ClaimOutcome.Replay({ response: response(201, { note: "once" }) }),
      )
    }),
  )

  it.effect(
    "after a takeover, the first holder's late recording fails with ClaimLost and its effect rolls back",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = newPartner()
        const key = newKey()
        // Two seconds: the claim below must still find the lease running on a slow machine.
        const claim = claimOf(partnerId, key, { leaseSeconds: 2 })
        const firstToken = yield* execute(claim)
        const working = yield* Deferred.make<void>()
        const wakeUp = yield* Deferred.make<void>()
        // The first holder does its business work, then stalls past its lease (a long GC pause, a lost network).
        const first = yield* Effect.fork(
          sql.withTransaction(
            Effect.gen(function* () {
              yield* insertEffect({ partnerId, key }, "first holder")
              yield* Deferred.succeed(working, undefined)
              yield* Deferred.await(wakeUp)
              return yield* recordResponse({
                partnerId,
                key,
                claimToken: firstToken,
                response: response(201),
              })
            }),
          ),
        )
        yield* Deferred.await(working)
        expect(yield* Effect.flip(claimKey(claim))).toBeInstanceOf(IdempotencyKeyInProgress)
        // The lease runs out on the database's clock, the clock every process shares.
        yield* eventually(
          Effect.map(
            sql<{ over: boolean }>`
            SELECT now() >= lease_expires_at AS over FROM idempotency_keys
            WHERE partner_id = ${partnerId} AND key = ${key}`,
            (rows) => rows[0]?.over === true,
          ),
        )
        const takeover = yield* claimKey(claim)
        expect(takeover).toMatchObject({ _tag: "Execute", takeover: true })
        const secondToken = takeover._tag === "Execute" ? takeover.claimToken : ""
        expect(
          yield* executeRequest(
            { partnerId, key, claimToken: secondToken },
            "second holder",
            response(201, { n: 2 }),
          ),
        ).toBe("Completed")
        yield* Deferred.succeed(wakeUp, undefined)
        const late = yield* Effect.flip(Fiber.join(first))
        expect(late).toEqual(new ClaimLost({ partnerId, key }))
        expect(yield* effectsOf({ partnerId, key })).toEqual(["second holder"])
        expect(yield* claimKey(claim)).toEqual(ClaimOutcome.Replay({ response: response(201, { n: 2 }) }))
      }),
  )

  it.effect(
    "a business transaction killed mid-way leaves nothing behind; after the lease the key runs again",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = newPartner()
        const key = newKey()
        const claimToken = yield* execute(claimOf(partnerId, key))
        const backend = yield* Deferred.make<number>()
        const killed = yield* Deferred.make<void>()
        const doomed = yield* Effect.fork(
          sql.withTransaction(
            Effect.gen(function* () {
              const [self] = yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`
              yield* insertEffect({ partnerId, key }, "never committed")
              yield* recordResponse({ partnerId, key, claimToken, response: response(201) })
              yield* Deferred.succeed(backend, self?.pid ?? 0)
              // COMMIT comes only after the backend is gone, as when a process or server dies mid-transaction.
              yield* Deferred.await(killed)
            }),
          ),
        )
        const pid = yield* Deferred.await(backend)
        // From another connection; the timeout makes the call return once the backend has exited.
        const [terminated] = yield* sql<{ done: boolean }>`SELECT pg_terminate_backend(${pid}, 5000) AS done`
        expect(terminated?.done).toBe(true)
        yield* Deferred.succeed(killed, undefined)
        const exit = yield* Fiber.await(doomed)
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) expect(Cause.isInterruptedOnly(exit.cause)).toBe(false)
        expect(yield* effectsOf({ partnerId, key })).toEqual([])
        expect(yield* rowOf({ partnerId, key })).toMatchObject({
          state: "Claimed",
          claim_token: claimToken,
          response_status: null,
          response_body: null,
        })
        // Within the lease nobody can tell the holder died; after it, the key is taken over and runs once.
        expect(yield* Effect.flip(claimKey(claimOf(partnerId, key)))).toBeInstanceOf(IdempotencyKeyInProgress)
        yield* age({ partnerId, key }, 30)
        const takeover = yield* claimKey(claimOf(partnerId, key))
        expect(takeover).toMatchObject({ _tag: "Execute", takeover: true })
        const newToken = takeover._tag === "Execute" ? takeover.claimToken : ""
        expect(yield* executeRequest({ partnerId, key, claimToken: newToken }, "after the crash")).toBe(
          "Completed",
        )
        expect(yield* effectsOf({ partnerId, key })).toEqual(["after the crash"])
      }),
  )

  it.effect("refuses to run outside a transaction, where the response would commit without its effect", () =>
    Effect.gen(function* () {
      const partnerId = newPartner()
      const key = newKey()
      const claimToken = yield* execute(claimOf(partnerId, key))
      const exit = yield* Effect.exit(recordResponse({ partnerId, key, claimToken, response: response(201) }))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(Cause.pretty(exit.cause)).toContain("inside the business transaction")
      expect(yield* rowOf({ partnerId, key })).toMatchObject({ state: "Claimed", response_status: null })
    }),
  )
})

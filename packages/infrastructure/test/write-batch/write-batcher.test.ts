import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { IdempotencyKey, type TransactionResource } from "@points/domain"
import { Deferred, Effect, Exit, Fiber, Layer, Metric } from "effect"
import {
  addPointsPlan,
  anyUnitPlan,
  type BatchEntry,
  batchMetric,
  type ClaimKeyRequest,
  ClaimOutcome,
  claimKey,
  claimKeyInTransaction,
  getPointsAccountResource,
  getTransactionResource,
  getUserResource,
  ledgerStream,
  listPublicEvents,
  listTransactions,
  type PointsMovementInput,
  type RequestContext,
  readStream,
  runBatch,
  subtractPointsPlan,
  userStream,
  WriteBatcher,
} from "../../src/index.js"
import { eventually, lockWaiters } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"
import { fingerprint } from "../idempotency/key-fixtures.js"
import {
  activeUser,
  movement,
  newPartner,
  newReference,
  serviceDatabase,
} from "../services/service-fixtures.js"

const created = (answer: unknown): IdempotencyKey.RecordedResponse => ({
  status: 201,
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(answer),
})

const claimFor = (context: RequestContext, key: string): ClaimKeyRequest => ({
  partnerId: context.partnerId,
  key: IdempotencyKey.IdempotencyKeyValue.make(key),
  fingerprint: fingerprint({ path: "/api/points/add", body: key }),
  leaseSeconds: 30,
  lifetimeSeconds: 86_400,
})

/** A movement request as the API hands it to the batcher: its plan, its key's claim, its 201. */
const entryOf = (
  partner: RequestContext,
  kind: "add" | "subtract",
  input: PointsMovementInput,
  key = `key-${newId()}`,
) => {
  const context: RequestContext = { ...partner, requestId: `req-${newId()}`, idempotencyKey: key }
  const plan = kind === "add" ? addPointsPlan(context, input) : subtractPointsPlan(context, input)
  return Effect.map(
    plan,
    (plan): BatchEntry => ({ plan: anyUnitPlan(plan), claim: claimFor(context, key), respond: created }),
  )
}

// The entry as another request with its key would make it: another fingerprint.
const otherRequest = (entry: BatchEntry): BatchEntry => ({
  ...entry,
  claim: {
    ...entry.claim,
    fingerprint: fingerprint({ path: "/api/points/add", body: `other ${entry.claim.key}` }),
  },
})

const bodyOf = (result: { readonly _tag: string; readonly response?: IdempotencyKey.RecordedResponse }) =>
  JSON.parse(result.response?.body ?? "null") as TransactionResource

const inTransaction = (entries: ReadonlyArray<BatchEntry>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(runBatch(entries)))

const keyRows = (partnerId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ key: string; state: string; response_body: string | null }>`
      SELECT key, state, response_body FROM idempotency_keys WHERE partner_id = ${partnerId} ORDER BY key`,
  )

const database = WriteBatcher.layer.pipe(Layer.provideMerge(serviceDatabase()))

layer(database, { excludeTestServices: true })("write batcher", (it) => {
  describe("runBatch", () => {
    it.effect(
      "writes a batch of movements of one account as one unit, each decided after the ones before",
      () =>
        Effect.gen(function* () {
          const partner = yield* newPartner()
          const userId = yield* activeUser(partner)
          const entries = [
            yield* entryOf(partner, "add", movement(userId, 10)),
            yield* entryOf(partner, "add", movement(userId, 20)),
            yield* entryOf(partner, "subtract", movement(userId, 5)),
            yield* entryOf(partner, "add", movement(userId, 7)),
          ]
          const results = yield* inTransaction(entries)
          expect(results.map((result) => result._tag)).toEqual([
            "Committed",
            "Committed",
            "Committed",
            "Committed",
          ])
          const answers = results.map(bodyOf)
          expect(answers.map((answer) => [answer.type, answer.amount, answer.balance_after])).toEqual([
            ["add", 10, 10],
            ["add", 20, 30],
            ["subtract", 5, 25],
            ["add", 7, 32],
          ])
          // Each answer is what its GET answers, byte for byte.
          for (const answer of answers) {
            const read = yield* getTransactionResource(partner, answer.id)
            expect(JSON.stringify(read)).toBe(JSON.stringify(answer))
          }
          const account = yield* getPointsAccountResource(partner, userId)
          expect(account).toMatchObject({ balance: 32, version: 5 })
          // The first add opened the account: the user names it once, with a version one higher.
          expect(yield* getUserResource(partner, userId)).toMatchObject({
            points_account_id: account.id,
            status: "active",
            version: 3,
          })
          const userEvents = yield* readStream(userStream(userId).streamId, partner.partnerId)
          expect(userEvents.events.map((recorded) => (recorded.event as { _tag: string })._tag)).toEqual([
            "UserRegistered",
            "UserActivated",
            "PointsAccountLinked",
          ])
          // One event per movement, each with its own request's metadata, all in one transaction.
          const stream = yield* readStream(ledgerStream(userId).streamId, partner.partnerId)
          const movements = stream.events.slice(1)
          expect(movements.map((recorded) => recorded.context.idempotencyKey)).toEqual(
            entries.map((entry) => entry.claim.key),
          )
          expect(new Set(movements.map((recorded) => recorded.transactionId)).size).toBe(1)
          expect(stream.events.map((recorded) => recorded.streamVersion)).toEqual([1n, 2n, 3n, 4n, 5n])
          // A public event per movement, carrying the answer.
          const events = yield* listPublicEvents(partner.partnerId, { limit: 100 })
          const points = events.data.filter((event) => event.type.startsWith("points."))
          expect(points.map((event) => JSON.stringify(event.data))).toEqual(
            answers.map((answer) => JSON.stringify(answer)),
          )
          // Every key completed with the response it answered: a retry replays it.
          for (const [n, entry] of entries.entries()) {
            expect(yield* claimKey(entry.claim)).toEqual(
              ClaimOutcome.Replay({
                response: results[n]?._tag === "Committed" ? results[n].response : created(null),
              }),
            )
          }
        }),
    )

    it.effect(
      "leaves out a refusal, a known key, a held key, a reference taken in it and another request with a key in it; a repeated request is in progress",
      () =>
        Effect.gen(function* () {
          const partner = yield* newPartner()
          const userId = yield* activeUser(partner)
          const known = yield* entryOf(partner, "add", movement(userId, 3))
          expect((yield* inTransaction([known]))[0]?._tag).toBe("Committed")
          const held = yield* entryOf(partner, "add", movement(userId, 4))
          const holding = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const holder = yield* Effect.fork(
            Effect.flatMap(SqlClient.SqlClient, (sql) =>
              sql.withTransaction(
                Effect.gen(function* () {
                  yield* claimKeyInTransaction(held.claim)
                  yield* Deferred.succeed(holding, undefined)
                  yield* Deferred.await(release)
                }),
              ),
            ),
          )
          yield* Deferred.await(holding)
          const first = yield* entryOf(partner, "add", movement(userId, 10))
          const reference = newReference()
          const entries = [
            first,
            yield* entryOf(partner, "subtract", movement(userId, 100)),
            yield* entryOf(partner, "add", movement(userId, 5), first.claim.key),
            yield* entryOf(partner, "add", movement(userId, 3), known.claim.key),
            held,
            yield* entryOf(partner, "add", movement(userId, 6, reference)),
            yield* entryOf(partner, "add", movement(userId, 2, reference)),
            // A repeat of a known key is not in progress: it runs alone and is replayed.
            yield* entryOf(partner, "add", movement(userId, 3), known.claim.key),
            // Another request with the first one's key: not in progress either; it runs alone (IK1001 there).
            otherRequest(yield* entryOf(partner, "add", movement(userId, 5), first.claim.key)),
          ]
          const results = yield* inTransaction(entries)
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(holder)
          expect(results.map((result) => result._tag)).toEqual([
            "Committed",
            "RunAlone",
            "InProgress",
            "RunAlone",
            "RunAlone",
            "Committed",
            "RunAlone",
            "RunAlone",
            "RunAlone",
          ])
          expect(
            results.map((result) => (result._tag === "Committed" ? bodyOf(result).balance_after : null)),
          ).toEqual([13, null, null, null, null, 19, null, null, null])
          // Nothing of the ones left out was written: no transaction, no key (the held key is its holder's).
          expect((yield* getPointsAccountResource(partner, userId)).balance).toBe(19)
          const transactions = yield* listTransactions(partner, { user_id: userId })
          expect(transactions.data.map((transaction) => transaction.amount)).toEqual([3, 10, 6])
          const stateOf = new Map((yield* keyRows(partner.partnerId)).map((row) => [row.key, row.state]))
          expect(stateOf).toEqual(
            new Map([
              [known.claim.key, "Completed"],
              [first.claim.key, "Completed"],
              [held.claim.key, "Claimed"],
              [entries[5]?.claim.key, "Completed"],
            ]),
          )
        }),
    )

    it.effect("rolls back whole when any part of it fails", () =>
      Effect.gen(function* () {
        const partner = yield* newPartner()
        const userId = yield* activeUser(partner)
        const good = yield* entryOf(partner, "add", movement(userId, 10))
        const broken = yield* entryOf(partner, "add", movement(userId, 20))
        const exit = yield* Effect.exit(
          inTransaction([
            good,
            {
              ...broken,
              respond: () => {
                throw new Error("no answer")
              },
            },
          ]),
        )
        expect(Exit.isFailure(exit)).toBe(true)
        const stream = yield* readStream(ledgerStream(userId).streamId, partner.partnerId)
        expect(stream.events).toEqual([])
        expect(yield* keyRows(partner.partnerId)).toEqual([])
        expect((yield* listTransactions(partner, { user_id: userId })).data).toEqual([])
      }),
    )
  })

  describe("WriteBatcher", () => {
    it.effect("commits concurrent movements of one account exactly once each, in fewer transactions", () =>
      Effect.gen(function* () {
        const batcher = yield* WriteBatcher
        const partner = yield* newPartner()
        const userId = yield* activeUser(partner)
        const amounts = Array.from({ length: 40 }, (_, n) => n + 1)
        const entries = yield* Effect.forEach(amounts, (amount) =>
          entryOf(partner, "add", movement(userId, amount)),
        )
        const counted = Effect.all([
          Metric.value(batchMetric.batches("committed")),
          Metric.value(batchMetric.requests("committed")),
        ])
        const [batchesBefore, requestsBefore] = yield* counted
        const results = yield* Effect.forEach(entries, (entry) => batcher.submit(entry), {
          concurrency: "unbounded",
        })
        expect(results.every((result) => result._tag === "Committed")).toBe(true)
        const total = amounts.reduce((sum, amount) => sum + amount, 0)
        expect((yield* getPointsAccountResource(partner, userId)).balance).toBe(total)
        expect(
          results
            .map(bodyOf)
            .map((answer) => answer.balance_after)
            .sort((a, b) => a - b)
            .at(-1),
        ).toBe(total)
        const stream = yield* readStream(ledgerStream(userId).streamId, partner.partnerId)
        const movements = stream.events.slice(1)
        expect(movements).toHaveLength(40)
        expect(new Set(movements.map((recorded) => recorded.transactionId)).size).toBeLessThan(40)
        expect((yield* keyRows(partner.partnerId)).every((row) => row.state === "Completed")).toBe(true)
        // /metrics tells the batch size: requests committed over batches committed.
        const [batchesAfter, requestsAfter] = yield* counted
        expect(requestsAfter.count - requestsBefore.count).toBe(40)
        const batches = batchesAfter.count - batchesBefore.count
        expect(batches).toBeGreaterThan(0)
        expect(batches).toBeLessThan(40)
      }),
    )

    it.effect(
      "answers a repeat of a request in flight, or another request with its key, as in progress at once",
      () =>
        Effect.gen(function* () {
          const batcher = yield* WriteBatcher
          const sql = yield* SqlClient.SqlClient
          const partner = yield* newPartner()
          const userId = yield* activeUser(partner)
          // The account opened first, so that its stream exists to be held below.
          const opening = yield* batcher.submit(yield* entryOf(partner, "add", movement(userId, 1)))
          expect(opening._tag).toBe("Committed")
          // Another transaction holds every stream row of the partner: the next batch waits at its lock.
          const holding = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const holder = yield* Effect.fork(
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`SELECT 1 FROM streams WHERE partner_id = ${partner.partnerId} FOR UPDATE`
                yield* Deferred.succeed(holding, undefined)
                yield* Deferred.await(release)
              }),
            ),
          )
          yield* Deferred.await(holding)
          const first = yield* entryOf(partner, "add", movement(userId, 10))
          const writing = yield* Effect.fork(batcher.submit(first))
          yield* eventually(lockWaiters, (waiting) => waiting > 0, 5)

          // The same request again while the first is written: IK1002 at once, not after the batch.
          const repeat = yield* batcher.submit(first).pipe(Effect.timeout("5 seconds"))
          expect(repeat._tag).toBe("InProgress")
          // Another request with the key while the first runs: IK1002 at once too (DESIGN.md section 4).
          const other = yield* batcher.submit(otherRequest(first)).pipe(Effect.timeout("5 seconds"))
          expect(other._tag).toBe("InProgress")

          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(holder)
          expect((yield* Fiber.join(writing))._tag).toBe("Committed")
          // Once the first is recorded, another request with its key is IK1001.
          const refused = yield* Effect.flip(claimKey(otherRequest(first).claim))
          expect(refused._tag).toBe("IdempotencyKeyReused")
          // Once written, the request no longer executes: retries arriving together all go on to be
          // replayed, none is in progress (its key is known, so none of them executes).
          const retries = yield* Effect.all(
            [batcher.submit(first), batcher.submit(first), batcher.submit(first)],
            { concurrency: "unbounded" },
          )
          expect(retries.map((retry) => retry._tag)).toEqual(["RunAlone", "RunAlone", "RunAlone"])
          expect((yield* getPointsAccountResource(partner, userId)).balance).toBe(11)
        }),
    )

    it.effect("takes each request's rate-limit cell before the batch: one refused is not written", () =>
      Effect.gen(function* () {
        const batcher = yield* WriteBatcher
        const partner = yield* newPartner()
        const userId = yield* activeUser(partner)
        // A burst of 3 at one request a minute: the 4th and 5th requests are refused whatever the timing.
        const rateLimit = { key: `test:${newId()}`, policy: { ratePerSecond: 1 / 60, burst: 3 } }
        const entries = yield* Effect.forEach([1, 2, 4, 8, 16], (amount) =>
          entryOf(partner, "add", movement(userId, amount)),
        )
        const outcomes = yield* Effect.forEach(entries, (entry) => batcher.submit({ ...entry, rateLimit }), {
          concurrency: "unbounded",
        })
        expect(outcomes.map((outcome) => outcome._tag).sort()).toEqual([
          "Committed",
          "Committed",
          "Committed",
          "RateLimited",
          "RateLimited",
        ])
        // Every outcome carries its decision: the ones written were allowed, each with one cell fewer left.
        const decisions = outcomes.map((outcome) => outcome.rateLimit)
        expect(decisions.map((decision) => decision?.allowed)).toEqual(
          outcomes.map((outcome) => outcome._tag === "Committed"),
        )
        const written = outcomes.flatMap((outcome) => (outcome._tag === "Committed" ? [bodyOf(outcome)] : []))
        const balance = (yield* getPointsAccountResource(partner, userId)).balance
        expect(balance).toBe(written.reduce((sum, answer) => sum + answer.amount, 0))
        // Nothing of a refused request: no key row, no transaction.
        const keys = (yield* keyRows(partner.partnerId)).map((row) => row.key)
        expect(keys).toHaveLength(3)
        const refusedKeys = entries
          .filter((_, n) => outcomes[n]?._tag === "RateLimited")
          .map((e) => e.claim.key)
        for (const key of refusedKeys) expect(keys).not.toContain(key)
        // A request without a rate limit is written whatever the bucket holds.
        const free = yield* batcher.submit(yield* entryOf(partner, "add", movement(userId, 32)))
        expect(free._tag).toBe("Committed")
        expect(free.rateLimit).toBeUndefined()
      }),
    )
  })
})

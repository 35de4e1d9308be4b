import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Email, PartnerId, PartnerUserId, User, UserId } from "@points/domain"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Option, Ref } from "effect"
import {
  appendToStream,
  ConsumerNotCaughtUp,
  consumerStats,
  ExpectedVersion,
  hasEventsAfter,
  isLogEventType,
  type LogEventType,
  LogListener,
  LogNotifier,
  logEventTypes,
  logStart,
  readAllAfter,
  readCheckpoint,
  readLogHead,
  runConsumer,
  userStream,
  waitUntilCaughtUp,
} from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { at, contextFor, newId } from "../fixtures.js"
import {
  appendEvents,
  createHandledTable,
  handledBy,
  logInCommitOrder,
  recordHandled,
  waitForStat,
} from "./consumer-fixtures.js"

// One UserRegistered event on a new user's stream of a new partner.
const registerUserEvent = Effect.suspend(() => {
  const partnerId = newId()
  const userId = newId()
  return appendToStream({
    streamId: userStream(userId).streamId,
    expected: ExpectedVersion.NoStream(),
    events: [
      User.UserRegistered.make({
        userId: UserId.make(userId),
        partnerId: PartnerId.make(partnerId),
        partnerUserId: PartnerUserId.make(`u-${userId}`),
        email: Email.make(`${userId}@example.com`),
        name: null,
        at,
      }),
    ],
    catalog: User.userEvents,
    context: contextFor(partnerId),
  })
})

// Live clock (no TestClock): the consumer polls and backs off in real time. Polling is short here so that
// these tests do not depend on NOTIFY; consumer-lock.test.ts checks that NOTIFY wakes a consumer.
const database = Layer.provideMerge(
  Layer.mergeAll(LogNotifier.layer, LogListener.layer),
  testDatabase({ poolSize: 30 }),
)

layer(database, { excludeTestServices: true })("runConsumer", (it) => {
  describe("delivery", () => {
    it.scoped("sees every event of 8 concurrent writers exactly once, in commit order", () =>
      Effect.gen(function* () {
        yield* createHandledTable
        const notifier = yield* LogNotifier
        const name = `all-${newId()}`
        yield* Effect.forkScoped(
          runConsumer({ name, handle: recordHandled(name), batchSize: 37, pollInterval: "100 millis" }),
        )
        // 8 writers x 50 appends over 5 streams each, every third append with 2 events in one transaction.
        const appended = yield* Effect.all(
          Array.from({ length: 8 }, () =>
            Effect.gen(function* () {
              const partners = Array.from({ length: 5 }, () => newId())
              const ids: Array<string> = []
              for (let n = 0; n < 50; n++) {
                const result = yield* appendEvents(partners[n % 5] as string, n % 3 === 0 ? 2 : 1)
                yield* notifier.committed
                ids.push(...result.recorded.map((event) => event.eventId))
              }
              return ids
            }),
          ),
          { concurrency: "unbounded" },
        )
        const written = appended.flat()
        expect(written).toHaveLength(8 * (17 * 2 + 33))

        yield* waitUntilCaughtUp(name, "head", "20 seconds")
        const handled = yield* handledBy(name)
        const log = yield* logInCommitOrder
        // The consumer saw the whole log (ours and earlier tests' events), each event once, in commit order.
        expect(handled.map((row) => row.event_id)).toEqual(log.map((row) => row.event_id))
        expect(new Set(handled.map((row) => row.event_id)).size).toBe(handled.length)
        const seen = new Set(handled.map((row) => row.event_id))
        expect(written.filter((id) => !seen.has(id))).toEqual([])
        for (let n = 1; n < handled.length; n++) {
          const previous = handled[n - 1] as (typeof handled)[number]
          const current = handled[n] as (typeof handled)[number]
          const previousTx = BigInt(previous.transaction_id)
          const currentTx = BigInt(current.transaction_id)
          expect(currentTx >= previousTx).toBe(true)
          if (currentTx === previousTx) {
            expect(BigInt(current.global_position) > BigInt(previous.global_position)).toBe(true)
          }
        }
        const stats = yield* consumerStats(name)
        expect(stats.events).toBe(handled.length)
        expect(stats.failures).toBe(0)
      }),
    )

    it.scoped(
      "waits below an open transaction and then handles it first: a late commit is never skipped",
      () =>
        Effect.gen(function* () {
          yield* createHandledTable
          const sql = yield* SqlClient.SqlClient
          const name = `late-${newId()}`
          yield* Effect.forkScoped(
            runConsumer({ name, handle: recordHandled(name), batchSize: 100, pollInterval: "100 millis" }),
          )
          const before = yield* appendEvents(newId())
          const baseline = before.recorded[0]
          if (baseline === undefined) return expect.unreachable()
          yield* waitUntilCaughtUp(name, baseline, "10 seconds")

          // T1: appends (taking the lower position) and stays open until told to commit.
          const appendedInT1 = yield* Deferred.make<string>()
          const commitT1 = yield* Deferred.make<void>()
          const t1 = yield* Effect.fork(
            sql.withTransaction(
              Effect.gen(function* () {
                const result = yield* appendEvents(newId())
                yield* Deferred.succeed(appendedInT1, result.recorded[0]?.eventId ?? "")
                yield* Deferred.await(commitT1)
                return result.recorded[0]
              }),
            ),
          )
          const t1EventId = yield* Deferred.await(appendedInT1)
          // T2: appends after T1 (a higher position and transaction id) and commits at once.
          const t2 = (yield* appendEvents(newId())).recorded[0]
          if (t2 === undefined) return expect.unreachable()

          // Two full reads after T2 committed: the consumer has looked, and must have stopped below T1.
          const readsAfterT2 = (yield* consumerStats(name)).reads
          yield* waitForStat(name, "reads", readsAfterT2 + 2)
          expect(yield* hasEventsAfter(baseline)).toBe(true)
          const whileOpen = yield* handledBy(name)
          expect(whileOpen.map((row) => row.event_id)).not.toContain(t2.eventId)
          expect(whileOpen.map((row) => row.event_id)).not.toContain(t1EventId)
          expect(yield* readCheckpoint(name)).toEqual(
            Option.some({ transactionId: baseline.transactionId, globalPosition: baseline.globalPosition }),
          )

          yield* Deferred.succeed(commitT1, undefined)
          const t1Event = yield* Fiber.join(t1)
          if (t1Event === undefined) return expect.unreachable()
          expect(t1Event.globalPosition < t2.globalPosition).toBe(true)
          expect(t1Event.transactionId < t2.transactionId).toBe(true)
          yield* waitUntilCaughtUp(name, t2, "10 seconds")
          const after = (yield* handledBy(name)).map((row) => row.event_id)
          expect(after.filter((id) => id === t1EventId)).toHaveLength(1)
          expect(after.filter((id) => id === t2.eventId)).toHaveLength(1)
          expect(after.indexOf(t1EventId)).toBeLessThan(after.indexOf(t2.eventId))
          expect(after.slice(-2)).toEqual([t1EventId, t2.eventId])
        }),
    )

    it.scoped("given event types, hands only those to the handler and moves past the rest unread", () =>
      Effect.gen(function* () {
        yield* createHandledTable
        const sql = yield* SqlClient.SqlClient
        const name = `typed-${newId()}`
        const handledTypes: Array<string> = []
        const partnerUserIds: Array<string> = []
        yield* Effect.forkScoped(
          runConsumer({
            name,
            handle: (events) =>
              Effect.zipRight(
                Effect.sync(() => {
                  handledTypes.push(...events.map((event) => event.type))
                  // Typed by eventTypes: each is a User.UserRegistered, with no cast.
                  partnerUserIds.push(...events.map((event) => event.event.partnerUserId))
                }),
                recordHandled(name)(events),
              ),
            eventTypes: ["UserRegistered"],
            batchSize: 7,
            pollInterval: "100 millis",
          }),
        )
        // 10 partner registrations and 3 user registrations, interleaved.
        for (let n = 0; n < 10; n++) {
          yield* appendEvents(newId())
          if (n % 3 === 0) yield* registerUserEvent
        }
        yield* waitUntilCaughtUp(name, "head", "10 seconds")

        const wanted = yield* sql<{ event_id: string }>`
          SELECT event_id FROM events WHERE event_type = 'UserRegistered' ORDER BY transaction_id, global_position`
        const handled = yield* handledBy(name)
        expect(wanted.length).toBeGreaterThanOrEqual(4)
        expect(handled.map((row) => row.event_id)).toEqual(wanted.map((row) => row.event_id))
        expect(new Set(handledTypes)).toEqual(new Set(["UserRegistered"]))
        const registeredUsers = yield* sql<{ partner_user_id: string }>`
          SELECT data->>'partnerUserId' AS partner_user_id FROM events WHERE event_type = 'UserRegistered'
          ORDER BY transaction_id, global_position`
        expect(partnerUserIds).toEqual(registeredUsers.map((row) => row.partner_user_id))
        // Its checkpoint is the head of the log, past the last partner registration it never handled.
        const head = yield* readLogHead
        expect(yield* readCheckpoint(name)).toEqual(Option.some(head))
        const [all] = yield* sql<{ count: string }>`SELECT count(*)::text AS count FROM events`
        expect((yield* consumerStats(name)).events).toBe(Number(all?.count))

        // One read of the log from its start, limited to 5 events, passes 5 and returns the users among them.
        const read = yield* readAllAfter(logStart, 5, ["UserRegistered"])
        const firstFive = yield* sql<{ event_id: string; event_type: string }>`
          SELECT event_id, event_type FROM events ORDER BY transaction_id, global_position LIMIT 5`
        expect(read.scanned).toBe(5)
        expect(read.events.map((event) => event.eventId)).toEqual(
          firstFive.filter((row) => row.event_type === "UserRegistered").map((row) => row.event_id),
        )
        expect(read.events.every((event) => event.event instanceof User.UserRegistered)).toBe(true)
        const fifth = (yield* readAllAfter(logStart, 5)).events[4]
        expect(read.checkpoint).toEqual({
          transactionId: fifth?.transactionId,
          globalPosition: fifth?.globalPosition,
        })
      }),
    )
  })

  it.effect(
    "refuses at start an event type the log cannot hold, or an empty list, before it reads or moves anything",
    () =>
      Effect.gen(function* () {
        // The webhooks' name of an event, not its type in the log: the type checker refuses it too.
        // @ts-expect-error `points.added` is no LogEventType
        const misspelt: LogEventType = "points.added"
        expect(isLogEventType(misspelt)).toBe(false)
        expect(logEventTypes).toContain("PointsAdded")
        yield* appendEvents(newId())
        for (const [eventTypes, problem] of [
          [
            [misspelt, "UserRegistered"],
            "eventTypes names no event type of the log: points.added (the log's types: ",
          ],
          [[], "eventTypes is empty, so it would handle nothing"],
        ] as const) {
          const name = `refused-${newId()}`
          const exit = yield* Effect.exit(
            runConsumer({
              name,
              handle: recordHandled(name),
              eventTypes,
              batchSize: 10,
              pollInterval: "100 millis",
            }),
          )
          expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain(`consumer ${name}: ${problem}`)
          // No checkpoint was made, so none moved past the events it meant.
          expect(yield* readCheckpoint(name)).toEqual(Option.none())
        }
      }),
  )

  it.scoped("commits the handler's writes with the checkpoint: a failed batch leaves neither", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE side_effects (consumer text NOT NULL, event_id uuid NOT NULL)`
      const name = `atomic-${newId()}`
      const failing = yield* Ref.make(true)
      const handle = (events: ReadonlyArray<{ readonly eventId: string }>) =>
        Effect.gen(function* () {
          for (const event of events) {
            yield* sql`INSERT INTO side_effects (consumer, event_id) VALUES (${name}, ${event.eventId})`
          }
          if (yield* Ref.get(failing)) {
            return yield* Effect.fail(new Error("the handler fails after writing"))
          }
        })
      // Catch up first, so the failing batch holds only the new event.
      const head = yield* readLogHead
      yield* Effect.forkScoped(
        runConsumer({
          name,
          handle,
          batchSize: 1000,
          pollInterval: "100 millis",
          retryBackoff: { initial: "10 millis", max: "50 millis" },
        }),
      )
      yield* Ref.set(failing, false)
      yield* waitUntilCaughtUp(name, head, "10 seconds")
      const caughtUp = yield* readCheckpoint(name)
      const rowsBefore = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM side_effects`
      yield* Ref.set(failing, true)

      const event = (yield* appendEvents(newId())).recorded[0]
      if (event === undefined) return expect.unreachable()
      yield* waitForStat(name, "failures", 3)
      const whileFailing = yield* sql<{ n: string }>`
        SELECT count(*)::text AS n FROM side_effects WHERE event_id = ${event.eventId}`
      expect(whileFailing[0]?.n).toBe("0")
      expect(yield* readCheckpoint(name)).toEqual(caughtUp)

      yield* Ref.set(failing, false)
      yield* waitUntilCaughtUp(name, event, "10 seconds")
      const rows = yield* sql<{ event_id: string }>`
        SELECT event_id FROM side_effects WHERE consumer = ${name}`
      expect(rows.filter((row) => row.event_id === event.eventId)).toHaveLength(1)
      expect(rows).toHaveLength(Number(rowsBefore[0]?.n ?? "0") + 1)
      expect(yield* readCheckpoint(name)).toEqual(
        Option.some({ transactionId: event.transactionId, globalPosition: event.globalPosition }),
      )
    }),
  )

  it.scoped("paces the reads of a busy log to one per interval, and misses none of its events", () =>
    Effect.gen(function* () {
      yield* createHandledTable
      const notifier = yield* LogNotifier
      const paced = `paced-${newId()}`
      const eager = `eager-${newId()}`
      const quiet = `quiet-${newId()}`
      // A long poll: every read here after the first comes from a NOTIFY.
      const consumer = (name: string, fromEvents?: number) =>
        runConsumer({
          name,
          handle: recordHandled(name),
          batchSize: 100,
          pollInterval: "30 seconds",
          ...(fromEvents === undefined ? {} : { pacing: { interval: "1 second", fromEvents } }),
        })
      // Paced after any read that found an event; and after reads of 1,000 events, which these never are.
      yield* Effect.forkScoped(consumer(paced, 1))
      yield* Effect.forkScoped(consumer(eager))
      yield* Effect.forkScoped(consumer(quiet, 1_000))
      for (const name of [paced, eager, quiet]) yield* waitUntilCaughtUp(name, "head", "10 seconds")
      const readsOf = (name: string) => Effect.map(consumerStats(name), (stats) => stats.reads)
      const pacedBefore = yield* readsOf(paced)
      const eagerBefore = yield* readsOf(eager)
      const started = Date.now()
      // 20 commits, each once the unpaced consumers have read the one before: the eager one reads 20 times,
      // and so does the one paced only above 1,000 events, or it would take 20 intervals (20 s), not half of it.
      const written: Array<string> = []
      let last: { readonly transactionId: bigint; readonly globalPosition: bigint } | undefined
      for (let n = 0; n < 20; n++) {
        const event = (yield* appendEvents(newId())).recorded[0]
        if (event === undefined) return expect.unreachable()
        yield* notifier.committed
        written.push(event.eventId)
        last = event
        yield* waitUntilCaughtUp(eager, event, "10 seconds")
        yield* waitUntilCaughtUp(quiet, event, "10 seconds")
      }
      if (last === undefined) return expect.unreachable()
      const unpacedElapsed = Date.now() - started
      expect(unpacedElapsed).toBeLessThan(10 * 1000)
      yield* waitUntilCaughtUp(paced, last, "10 seconds")
      const elapsed = Date.now() - started
      expect((yield* readsOf(eager)) - eagerBefore).toBeGreaterThanOrEqual(20)
      const pacedReads = (yield* readsOf(paced)) - pacedBefore
      expect(pacedReads).toBeLessThanOrEqual(Math.ceil(elapsed / 1000) + 1)
      expect(pacedReads).toBeLessThan(20)
      const handled = new Set((yield* handledBy(paced)).map((row) => row.event_id))
      expect(written.filter((id) => !handled.has(id))).toEqual([])
    }),
  )

  it.effect("waitUntilCaughtUp fails with where the consumer got to when the deadline passes", () =>
    Effect.gen(function* () {
      const head = yield* readLogHead
      const error = yield* Effect.flip(waitUntilCaughtUp(`never-ran-${newId()}`, head, "50 millis"))
      expect(error).toBeInstanceOf(ConsumerNotCaughtUp)
      expect(error).toMatchObject({ reached: logStart, target: head })
    }),
  )
})

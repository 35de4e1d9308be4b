import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Partner, PartnerId } from "@points/domain"
import { Effect, Either } from "effect"
import {
  appendToStream,
  appendToStreams,
  ExpectedVersion,
  partnerStream,
  readStream,
  StreamVersionConflict,
} from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { at, contextFor, newId } from "../fixtures.js"

const registered = (partnerId: string, name = "Acme") =>
  Partner.PartnerRegistered.make({ partnerId: PartnerId.make(partnerId), name, at })

const append = (partnerId: string, expected: ExpectedVersion, events: ReadonlyArray<Partner.PartnerEvent>) =>
  appendToStream({
    streamId: partnerStream(partnerId).streamId,
    expected,
    events,
    catalog: Partner.partnerEvents,
    context: contextFor(partnerId),
  })

// 50 connections, so that the 50 concurrent appends below really race on the database.
layer(testDatabase({ poolSize: 50 }))("appendToStream", (it) => {
  describe("expected versions", () => {
    it.effect("appends to a new stream and reads the events back with their metadata", () =>
      Effect.gen(function* () {
        const partnerId = newId()
        const result = yield* append(partnerId, ExpectedVersion.NoStream(), [registered(partnerId)])
        expect(result.nextVersion).toBe(1n)
        const read = yield* readStream(partnerStream(partnerId).streamId, partnerId)
        expect(read.version).toBe(1n)
        expect(read.events.map((e) => e.event)).toEqual([registered(partnerId)])
        expect(read.events[0]?.context.partnerId).toBe(partnerId)
        expect(read.events[0]?.eventId).toBe(result.recorded[0]?.eventId)
        expect(read.events[0]?.globalPosition).toBe(result.recorded[0]?.globalPosition)
      }),
    )

    it.effect("refuses NoStream on an existing stream and Exact at a stale version, writing nothing", () =>
      Effect.gen(function* () {
        const partnerId = newId()
        yield* append(partnerId, ExpectedVersion.NoStream(), [registered(partnerId)])
        const again = yield* Effect.either(
          append(partnerId, ExpectedVersion.NoStream(), [registered(partnerId)]),
        )
        expect(Either.isLeft(again) && again.left).toBeInstanceOf(StreamVersionConflict)
        const stale = yield* Effect.either(
          append(partnerId, ExpectedVersion.Exact({ version: 0n }), [registered(partnerId, "B")]),
        )
        expect(Either.isLeft(stale) && stale.left).toBeInstanceOf(StreamVersionConflict)
        const exact = yield* append(partnerId, ExpectedVersion.Exact({ version: 1n }), [
          registered(partnerId, "C"),
        ])
        expect(exact.nextVersion).toBe(2n)
        const any = yield* append(partnerId, ExpectedVersion.Any(), [
          registered(partnerId, "D"),
          registered(partnerId, "E"),
        ])
        expect(any.nextVersion).toBe(4n)
        const read = yield* readStream(partnerStream(partnerId).streamId, partnerId)
        expect(read.events.map((e) => (e.event as Partner.PartnerRegistered).name)).toEqual([
          "Acme",
          "C",
          "D",
          "E",
        ])
        expect(read.events.map((e) => e.streamVersion)).toEqual([1n, 2n, 3n, 4n])
      }),
    )

    it.effect("of 50 concurrent appends at one expected version, exactly one wins", () =>
      Effect.gen(function* () {
        const partnerId = newId()
        yield* append(partnerId, ExpectedVersion.NoStream(), [registered(partnerId)])
        const results = yield* Effect.all(
          Array.from({ length: 50 }, (_, n) =>
            Effect.either(
              append(partnerId, ExpectedVersion.Exact({ version: 1n }), [registered(partnerId, `w${n}`)]),
            ),
          ),
          { concurrency: "unbounded" },
        )
        const wins = results.filter(Either.isRight)
        const conflicts = results.filter((r) => Either.isLeft(r) && r.left instanceof StreamVersionConflict)
        expect(wins).toHaveLength(1)
        expect(conflicts).toHaveLength(49)
        const read = yield* readStream(partnerStream(partnerId).streamId, partnerId)
        expect(read.version).toBe(2n)
      }),
    )
  })

  it.effect("appends to several streams in one statement; a conflict on one fails the transaction", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [first, second] = [newId(), newId()]
      const request = (partnerId: string, expected: ExpectedVersion, name: string) => ({
        streamId: partnerStream(partnerId).streamId,
        expected,
        events: [registered(partnerId, name)],
        catalog: Partner.partnerEvents,
        context: contextFor(partnerId),
      })
      const results = yield* appendToStreams([
        request(first, ExpectedVersion.NoStream(), "A"),
        request(second, ExpectedVersion.NoStream(), "B"),
      ])
      expect(results.map((result) => result.nextVersion)).toEqual([1n, 1n])
      expect(results[0]?.recorded[0]?.transactionId).toBe(results[1]?.recorded[0]?.transactionId)
      // The second expectation fails: the first stream's append, made in the same statement, rolls back too.
      const conflict = yield* Effect.either(
        sql.withTransaction(
          appendToStreams([
            request(first, ExpectedVersion.Exact({ version: 1n }), "A2"),
            request(second, ExpectedVersion.NoStream(), "B2"),
          ]),
        ),
      )
      expect(Either.isLeft(conflict) && conflict.left).toBeInstanceOf(StreamVersionConflict)
      expect((yield* readStream(partnerStream(first).streamId, first)).version).toBe(1n)
      expect((yield* readStream(partnerStream(second).streamId, second)).version).toBe(1n)
    }),
  )

  it.effect("hides a stream from other partners and refuses their writes to it", () =>
    Effect.gen(function* () {
      const owner = newId()
      const intruder = newId()
      yield* append(owner, ExpectedVersion.NoStream(), [registered(owner)])
      const seen = yield* readStream(partnerStream(owner).streamId, intruder)
      expect(seen).toEqual({ events: [], version: 0n })
      const write = yield* Effect.either(
        appendToStream({
          streamId: partnerStream(owner).streamId,
          expected: ExpectedVersion.Any(),
          events: [registered(owner, "hijack")],
          catalog: Partner.partnerEvents,
          context: contextFor(intruder),
        }),
      )
      expect(Either.isLeft(write)).toBe(true)
    }),
  )

  it.effect("keeps the log append-only: updates and deletes of events are refused by the database", () =>
    Effect.gen(function* () {
      const partnerId = newId()
      yield* append(partnerId, ExpectedVersion.NoStream(), [registered(partnerId)])
      const sql = yield* SqlClient.SqlClient
      const update = yield* Effect.either(
        sql`UPDATE events SET event_type = 'X' WHERE partner_id = ${partnerId}`,
      )
      const remove = yield* Effect.either(sql`DELETE FROM events WHERE partner_id = ${partnerId}`)
      expect(Either.isLeft(update)).toBe(true)
      expect(Either.isLeft(remove)).toBe(true)
    }),
  )
})

import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import {
  AccountId,
  fold,
  Ledger,
  Points,
  PointsBalance,
  ReferenceId,
  TransactionId,
  UserId,
} from "@points/domain"
import { DateTime, Effect, Layer } from "effect"
import {
  type AppendContext,
  appendToStream,
  decideAndAppend,
  ExpectedVersion,
  InlineProjection,
  LogNotifier,
  ledgerStream,
  readStream,
} from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { contextFor, newId } from "../fixtures.js"

const addPoints = (context: AppendContext, userId: string, amount: number) =>
  decideAndAppend(
    { ledger: ledgerStream(userId) },
    ({ ledger }) =>
      Effect.map(
        Ledger.decide(
          Ledger.AddPoints.make({
            userId: UserId.make(userId),
            accountId: AccountId.make(newId()),
            transactionId: TransactionId.make(newId()),
            amount: Points.make(amount),
            referenceId: ReferenceId.make(`ref-${newId()}`),
            description: null,
            holder: "active",
          }),
          ledger,
        ),
        (events) => ({ ledger: events }),
      ),
    context,
  )

/** The ledger's state folded from every event of its stream, the reference a snapshot must equal. */
const foldedLedger = (context: AppendContext, userId: string) =>
  Effect.map(readStream(ledgerStream(userId).streamId, context.partnerId), (read) =>
    fold(
      Ledger.decider,
      read.events.map((e) => e.event as Ledger.LedgerEvent),
    ),
  )

const storedSnapshot = (userId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ snapshot: { name: string } | null; snapshot_version: string | null; version: string }>`
        SELECT snapshot, snapshot_version::text, version::text FROM streams
        WHERE stream_id = ${ledgerStream(userId).streamId}`,
  ).pipe(Effect.map((rows) => rows[0]))

layer(testDatabase().pipe(Layer.merge(InlineProjection.none), Layer.merge(LogNotifier.none)))(
  "snapshots",
  (it) => {
    describe("the state kept beside a stream", () => {
      it.effect("is written with every append and loads the state a fold of the whole stream gives", () =>
        Effect.gen(function* () {
          const context = contextFor(newId())
          const userId = newId()
          for (const amount of [5, 7, 11]) yield* addPoints(context, userId, amount)
          const stored = yield* storedSnapshot(userId)
          expect(stored?.snapshot?.name).toBe(Ledger.LEDGER_SNAPSHOT)
          expect(stored?.snapshot_version).toBe(stored?.version)
          const outcome = yield* addPoints(context, userId, 1)
          expect(outcome.states.ledger).toEqual(yield* foldedLedger(context, userId))
          expect(outcome.states.ledger._tag === "Open" && outcome.states.ledger.balance).toBe(24)
        }),
      )

      it.effect("has the events appended after it without a snapshot folded on top", () =>
        Effect.gen(function* () {
          const context = contextFor(newId())
          const userId = newId()
          const first = yield* addPoints(context, userId, 5)
          const account = first.states.ledger
          if (account._tag === "NoAccount") return expect.unreachable("no account opened")
          // A plain append keeps no snapshot: the stored one is now one version behind.
          yield* appendToStream({
            streamId: ledgerStream(userId).streamId,
            expected: ExpectedVersion.Exact({ version: 2n }),
            events: [
              Ledger.PointsAdded.make({
                userId: UserId.make(userId),
                accountId: account.accountId,
                transactionId: TransactionId.make(newId()),
                amount: Points.make(3),
                balanceAfter: PointsBalance.make(8),
                referenceId: ReferenceId.make(`ref-${newId()}`),
                description: null,
                at: DateTime.unsafeMake(Date.now()),
              }),
            ],
            catalog: Ledger.ledgerEvents,
            context,
          })
          const outcome = yield* addPoints(context, userId, 1)
          expect(outcome.states.ledger._tag === "Open" && outcome.states.ledger.balance).toBe(9)
          expect(outcome.states.ledger).toEqual(yield* foldedLedger(context, userId))
        }),
      )

      it.effect("of another format, or unreadable, is ignored: the whole stream is folded", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const context = contextFor(newId())
          const userId = newId()
          yield* addPoints(context, userId, 5)
          const streamId = ledgerStream(userId).streamId
          yield* sql`UPDATE streams SET snapshot = ${JSON.stringify({ name: "ledger/0", state: { _tag: "NoAccount" } })}::jsonb
                     WHERE stream_id = ${streamId}`
          const renamed = yield* addPoints(context, userId, 1)
          expect(renamed.states.ledger._tag === "Open" && renamed.states.ledger.balance).toBe(6)
          yield* sql`UPDATE streams SET snapshot = ${JSON.stringify({ name: Ledger.LEDGER_SNAPSHOT, state: { balance: "x" } })}::jsonb
                     WHERE stream_id = ${streamId}`
          const corrupt = yield* addPoints(context, userId, 1)
          expect(corrupt.states.ledger._tag === "Open" && corrupt.states.ledger.balance).toBe(7)
          expect(corrupt.states.ledger).toEqual(yield* foldedLedger(context, userId))
        }),
      )
    })
  },
)

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import type { PartnerId } from "@points/domain"
import { Cause, Deferred, Effect, Exit, Fiber, TestClock } from "effect"
import { type ReadModelTable, readModelTables, rebuildReadModels, verifyReadModels } from "../../src/index.js"
import {
  activateUser,
  activeUser,
  addPoints,
  cancelOrder,
  closeUser,
  completeOrder,
  createEndpoint,
  deleteEndpoint,
  disableEndpoint,
  failOrder,
  issueCredential,
  item,
  movePoints,
  openAccount,
  placeOrder,
  projectionDatabase,
  registerPartner,
  registerUser,
  revokeCredential,
  rotateEndpointSecret,
  rotateSecret,
  startProcessing,
  subtractPoints,
  updateEndpoint,
  updateUser,
} from "./commands.js"

// Which database transaction wrote a row (for lists that never skip a late commit) is not derived from the
// log: a rebuild writes every row in its own.
const withoutWriter = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.map(({ transaction_id: _, ...row }) => row)

/** Every read-model table's rows, in key order. */
const snapshot = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const tables = Object.entries(readModelTables) as Array<[ReadModelTable, string]>
  const entries = yield* Effect.forEach(tables, ([table, key]) =>
    Effect.map(
      sql.unsafe<Record<string, unknown>>(`SELECT * FROM ${table} ORDER BY ${key}`),
      (rows) => [table, withoutWriter(rows)] as const,
    ),
  )
  const byTable: Partial<Record<ReadModelTable, ReadonlyArray<Record<string, unknown>>>> = {}
  for (const [table, rows] of entries) byTable[table] = rows
  return byTable as Record<ReadModelTable, ReadonlyArray<Record<string, unknown>>>
})

/** A partner's realistic history through every command there is. */
const history = (partnerId: PartnerId) =>
  Effect.gen(function* () {
    yield* issueCredential(partnerId, "backend")
    const rotated = yield* issueCredential(partnerId, "rotated")
    const revoked = yield* issueCredential(partnerId, null)
    yield* TestClock.adjust("1 second")
    yield* rotateSecret(partnerId, rotated)
    yield* revokeCredential(partnerId, revoked)
    const kept = yield* createEndpoint(partnerId, "https://example.com/a", ["order.created"])
    const gone = yield* createEndpoint(partnerId, "https://example.com/b")
    yield* updateEndpoint(partnerId, kept, "https://example.com/a2", ["order.status_changed", "points.added"])
    yield* rotateEndpointSecret(partnerId, kept)
    yield* disableEndpoint(partnerId, kept)
    yield* deleteEndpoint(partnerId, gone)

    const waiting = yield* registerUser(partnerId, { name: null })
    const closing = yield* activeUser(partnerId)
    yield* openAccount(partnerId, closing)
    yield* addPoints(partnerId, closing, 40)
    yield* closeUser(partnerId, closing)
    const closedWithoutAccount = yield* activeUser(partnerId)
    yield* closeUser(partnerId, closedWithoutAccount)
    const buyers = yield* Effect.forEach([1, 2, 3], () => activeUser(partnerId))
    for (const [n, buyer] of buyers.entries()) {
      yield* TestClock.adjust("1 second")
      yield* updateUser(partnerId, buyer, `buyer-${n}@example.com`, `Buyer ${n}`)
      yield* movePoints("add", partnerId, buyer, 1_000, `bonus-${n}`, "welcome")
      yield* subtractPoints(partnerId, buyer, 100 + n)
      const delivered = yield* placeOrder(partnerId, buyer, [item("BOOK", 2, 100), item("PEN", 3, 10)])
      yield* startProcessing(partnerId, delivered)
      yield* completeOrder(partnerId, delivered)
      const cancelled = yield* placeOrder(partnerId, buyer, [item("MUG", 1, 50)])
      yield* cancelOrder(partnerId, buyer, cancelled)
      const failed = yield* placeOrder(partnerId, buyer, [item("FAIL-9", 1, 70)])
      yield* startProcessing(partnerId, failed)
      yield* failOrder(partnerId, buyer, failed, "sku unavailable")
      yield* placeOrder(partnerId, buyer, [item("CAP", 1, 20)])
    }
    yield* activateUser(partnerId, waiting)
  })

layer(projectionDatabase())("rebuildReadModels", (it) => {
  it.effect("rebuilds from the log exactly what inline projection wrote", () =>
    Effect.gen(function* () {
      const partners = yield* Effect.forEach(["Acme", "Globex"], (name) => registerPartner(name))
      for (const partnerId of partners) yield* history(partnerId)
      const inline = yield* snapshot
      // Something of every kind, so the comparison below means something.
      for (const rows of Object.values(inline)) expect(rows.length).toBeGreaterThan(0)
      expect(inline.webhook_endpoints).toHaveLength(2)
      expect(inline.users.filter((user) => user.points_account_id !== null)).toHaveLength(8)

      const sql = yield* SqlClient.SqlClient
      const events = yield* sql<{ count: string }>`SELECT count(*)::text AS count FROM events`
      const result = yield* rebuildReadModels({ batchSize: 7 })
      expect(result.events).toBe(Number(events[0]?.count))
      expect(result.rows).toEqual(
        Object.fromEntries(Object.entries(inline).map(([table, rows]) => [table, rows.length])),
      )
      expect(yield* snapshot).toEqual(inline)

      // A damaged read model comes back whole; a rebuild of a rebuild changes nothing.
      yield* sql`UPDATE users SET email = 'tampered@example.com', points_account_id = NULL`
      yield* sql`DELETE FROM points_transactions WHERE type = 'order_refund'`
      yield* sql`UPDATE orders SET status_history = '[]'`
      expect(yield* snapshot).not.toEqual(inline)
      yield* rebuildReadModels()
      expect(yield* snapshot).toEqual(inline)
    }),
  )

  it.effect("a rebuild beside concurrent writers loses none of their rows", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const users = yield* Effect.forEach([1, 2, 3, 4], () => activeUser(partnerId))
      // The writers either commit before the rebuild locks the log (and it reads their events), or wait for
      // it and project onto the rebuilt tables: both ways, every row is there once.
      yield* Effect.all(
        [
          Effect.asVoid(rebuildReadModels({ batchSize: 3 })),
          ...users.flatMap((userId) => [1, 2, 3].map((n) => Effect.asVoid(addPoints(partnerId, userId, n)))),
        ],
        { concurrency: "unbounded" },
      )
      const settled = yield* snapshot
      for (const userId of users) {
        expect(settled.points_transactions.filter((row) => row.user_id === userId)).toHaveLength(3)
        expect(settled.points_accounts.find((row) => row.user_id === userId)?.balance).toBe("6")
      }
      yield* rebuildReadModels()
      expect(yield* snapshot).toEqual(settled)
    }),
  )

  it.effect("folds each stream in version order when a later version has the smaller transaction id", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const partnerId = yield* registerPartner()
      const userId = yield* activeUser(partnerId)
      yield* addPoints(partnerId, userId, 1)
      // The first transaction takes its id (at its first write, as an order's own stream write does) and only
      // then waits; another adds to the account meanwhile; the first then adds the account's next version.
      const started = yield* Deferred.make<void>()
      const proceed = yield* Deferred.make<void>()
      const first = yield* Effect.fork(
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`SELECT pg_current_xact_id()`
            yield* Deferred.succeed(started, undefined)
            yield* Deferred.await(proceed)
            yield* addPoints(partnerId, userId, 3)
          }),
        ),
      )
      yield* Deferred.await(started)
      yield* addPoints(partnerId, userId, 2)
      yield* Deferred.succeed(proceed, undefined)
      yield* Fiber.join(first)
      const ledger = yield* sql<{ readonly version: string; readonly transaction_id: string }>`
        SELECT stream_version::text AS version, transaction_id::text AS transaction_id FROM events
        WHERE stream_id = ${`ledger-${userId}`} ORDER BY stream_version`
      const [second, third] = ledger.slice(-2)
      // The account's last version was written by the transaction with the smaller id: commit order inverts them.
      expect(BigInt(third?.transaction_id ?? 0)).toBeLessThan(BigInt(second?.transaction_id ?? 0))

      const before = yield* snapshot
      expect((yield* verifyReadModels({ batchSize: 2 })).consistent).toBe(true)
      yield* rebuildReadModels({ batchSize: 2 })
      expect(yield* snapshot).toEqual(before)
      expect(before.points_accounts.find((row) => row.user_id === userId)?.balance).toBe("6")
    }),
  )

  it.effect("refuses a batch size it cannot bound", () =>
    Effect.gen(function* () {
      const outcome = yield* Effect.exit(rebuildReadModels({ batchSize: 0 }))
      expect(Exit.isFailure(outcome) && Cause.isDie(outcome.cause)).toBe(true)
      const verified = yield* Effect.exit(verifyReadModels({ batchSize: 0 }))
      expect(Exit.isFailure(verified) && Cause.isDie(verified.cause)).toBe(true)
    }),
  )

  it.effect("verifies every read model against the log, finds drift row by row, and changes nothing", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* history(yield* registerPartner("Initech"))
      const before = yield* snapshot
      const clean = yield* verifyReadModels({ batchSize: 11 })
      expect(clean.consistent).toBe(true)
      for (const [table, rows] of Object.entries(before)) {
        expect(clean.tables[table as ReadModelTable]).toEqual({
          expected: rows.length,
          missing: 0,
          unexpected: 0,
          examples: [],
        })
      }
      expect(yield* snapshot).toEqual(before)

      // A balance edited by hand, a transaction deleted, a partner the log never registered.
      const account = before.points_accounts[0]?.id as string
      const transaction = before.points_transactions[0]?.id as string
      yield* sql`UPDATE points_accounts SET balance = balance + 1 WHERE id = ${account}`
      yield* sql`DELETE FROM points_transactions WHERE id = ${transaction}`
      yield* sql`INSERT INTO partners (id, name, created_at) VALUES ('00000000-0000-7000-8000-00000000abcd', 'Ghost', now())`
      const drifted = yield* verifyReadModels()
      expect(drifted.consistent).toBe(false)
      expect(drifted.tables.points_accounts).toMatchObject({ missing: 1, unexpected: 1, examples: [account] })
      expect(drifted.tables.points_transactions).toMatchObject({
        missing: 1,
        unexpected: 0,
        examples: [transaction],
      })
      expect(drifted.tables.partners).toMatchObject({
        missing: 0,
        unexpected: 1,
        examples: ["00000000-0000-7000-8000-00000000abcd"],
      })
      expect(drifted.tables.users).toMatchObject({ missing: 0, unexpected: 0 })

      // A rebuild repairs it; a verification beside concurrent writers sees one snapshot, still consistent.
      yield* rebuildReadModels()
      const users = yield* Effect.forEach([1, 2], () => activeUser(before.partners[0]?.id as PartnerId))
      const [during] = yield* Effect.all(
        [
          verifyReadModels({ batchSize: 5 }),
          ...users.flatMap((userId) =>
            [1, 2, 3].map((n) => Effect.asVoid(addPoints(before.partners[0]?.id as PartnerId, userId, n))),
          ),
        ],
        { concurrency: "unbounded" },
      )
      expect(during.consistent).toBe(true)
      expect((yield* verifyReadModels()).consistent).toBe(true)
    }),
  )
})

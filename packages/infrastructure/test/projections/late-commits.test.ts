import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import type { PartnerId, PublicEventResource } from "@points/domain"
import { Deferred, Effect, Fiber } from "effect"
import { findTransactions, findUsers, listPublicEvents, type Page } from "../../src/index.js"
import { activeUser, addPoints, projectionDatabase, registerPartner, registerUser } from "./commands.js"

/**
 * Follows a list's next_cursor from `cursor` to the end: every page's items, the last cursor met and how many
 * pages it took. A list that never ends (a cursor that does not move) fails it.
 */
const follow = <A, E, R>(
  read: (cursor: string | undefined) => Effect.Effect<Page<A>, E, R>,
  cursor: string | undefined,
) =>
  Effect.gen(function* () {
    const items: Array<A> = []
    let last = cursor
    let page = yield* read(cursor)
    for (let pages = 1; pages <= 100; pages++) {
      items.push(...page.data)
      if (page.next_cursor === null) return { items, lastCursor: last, pages }
      last = page.next_cursor
      page = yield* read(page.next_cursor)
    }
    throw new Error("more than 100 pages")
  })

/** The partner's public events from `cursor` on, `limit` a page. */
const readFrom = (partnerId: PartnerId, cursor: string | undefined, limit: number) =>
  Effect.map(
    follow((at) => listPublicEvents(partnerId, { limit, cursor: at }), cursor),
    ({
      items,
      lastCursor,
    }): { events: ReadonlyArray<PublicEventResource>; lastCursor: string | undefined } => ({
      events: items,
      lastCursor,
    }),
  )

const storedIds = (partnerId: PartnerId) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ readonly id: string }>`SELECT id FROM public_events WHERE partner_id = ${partnerId} ORDER BY id`,
      (rows) => rows.map((row) => row.id),
    ),
  )

/**
 * Runs `write` in a transaction held open until `release` is called: its ids are taken now, its rows
 * become visible only then.
 */
const holdOpen = <A, E, R>(write: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const written = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(
      sql.withTransaction(
        Effect.zipRight(
          write,
          Effect.zipRight(Deferred.succeed(written, undefined), Deferred.await(release)),
        ),
      ),
    )
    yield* Deferred.await(written)
    return Effect.zipRight(Deferred.succeed(release, undefined), Fiber.join(fiber))
  })

const twoUsers = (partnerId: PartnerId) => Effect.all([activeUser(partnerId), activeUser(partnerId)])

/**
 * A partner with two users: an add to the slow one takes its ids and log position first and stays
 * uncommitted until `commitSlow`; adds of `amounts` to the quick one commit meanwhile.
 */
const slowAndQuickAdds = (amounts: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const partnerId = yield* registerPartner()
    const [slow, quick] = yield* twoUsers(partnerId)
    const commitSlow = yield* holdOpen(addPoints(partnerId, slow, 5))
    for (const amount of amounts) yield* addPoints(partnerId, quick, amount)
    return { partnerId, slow, commitSlow }
  })

layer(projectionDatabase())("lists and rows that commit late", (it) => {
  it.effect(
    "an event whose write commits after a later one was listed comes with the next read of the cursor",
    () =>
      Effect.gen(function* () {
        // The slow write takes its event's id first and commits last.
        const { partnerId, commitSlow } = yield* slowAndQuickAdds([1, 2])
        const early = yield* readFrom(partnerId, undefined, 1)
        const visible = yield* storedIds(partnerId)
        expect(early.events.map((event) => event.id)).toEqual(visible)
        yield* commitSlow
        const all = yield* storedIds(partnerId)
        const late = all.filter((id) => !visible.includes(id))
        // The slow add's events sort before the row the last cursor continues after: keyset paging alone
        // would never give them.
        expect(late.length).toBeGreaterThan(0)
        const cursorRow = visible.at(-2) ?? ""
        expect(late.every((id) => id < cursorRow)).toBe(true)
        // Read again from the last cursor met, as a client tailing the list does: the late events come.
        const again = yield* readFrom(partnerId, early.lastCursor, 1)
        const given = new Set([...early.events, ...again.events].map((event) => event.id))
        expect([...given].sort()).toEqual(all)
      }),
  )

  it.effect("a page cut among late events gives some twice but skips none", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const [slow, quick] = yield* twoUsers(partnerId)
      const commitSlow = yield* holdOpen(
        Effect.all([
          addPoints(partnerId, slow, 1),
          addPoints(partnerId, slow, 2),
          addPoints(partnerId, slow, 3),
        ]),
      )
      yield* addPoints(partnerId, quick, 1)
      yield* addPoints(partnerId, quick, 2)
      const early = yield* readFrom(partnerId, undefined, 1)
      const visible = yield* storedIds(partnerId)
      yield* commitSlow
      const all = yield* storedIds(partnerId)
      const late = all.filter((id) => !visible.includes(id))
      expect(late.length).toBeGreaterThan(2)
      expect(late.every((id) => id < (visible.at(-2) ?? ""))).toBe(true)
      // Pages of 1: the late events (more than a page) are given one by one from the cursor.
      const again = yield* readFrom(partnerId, early.lastCursor, 1)
      const given = [...early.events, ...again.events].map((event) => event.id)
      expect([...new Set(given)].sort()).toEqual(all)
      // Given twice at most: once before the slow write committed, once again after a page cut among its rows.
      const counts = new Map<string, number>()
      for (const id of given) counts.set(id, (counts.get(id) ?? 0) + 1)
      expect(Math.max(...counts.values())).toBeLessThanOrEqual(2)
    }),
  )

  it.effect("a cursor of a read that saw every write pages as before: nothing twice", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const [user] = yield* twoUsers(partnerId)
      for (const amount of [1, 2, 3, 4]) yield* addPoints(partnerId, user, amount)
      const pages = yield* readFrom(partnerId, undefined, 3)
      expect(pages.events.map((event) => event.id)).toEqual(yield* storedIds(partnerId))
    }),
  )

  it.effect(
    "a points transaction that commits after a later one was listed comes with the next read too",
    () =>
      Effect.gen(function* () {
        // The slow add takes its place in the log (and its transaction's position) first, and commits last.
        const { partnerId, slow, commitSlow } = yield* slowAndQuickAdds([1, 2, 3])
        const readTransactions = (cursor: string | undefined) =>
          Effect.map(
            follow((at) => findTransactions(partnerId, { limit: 1, cursor: at }), cursor),
            ({ items, lastCursor }) => ({ ids: items.map((transaction) => transaction.id), lastCursor }),
          )
        const early = yield* readTransactions(undefined)
        expect(early.ids).toHaveLength(3)
        yield* commitSlow
        const all = (yield* findTransactions(partnerId, { limit: 100 })).data
        expect(all).toHaveLength(4)
        // In ledger order the slow add comes first: keyset paging alone would never give it after that read.
        const slowId = all.find((transaction) => transaction.user_id === slow)?.id
        expect(all[0]?.id).toBe(slowId)
        const again = yield* readTransactions(early.lastCursor)
        expect(new Set([...early.ids, ...again.ids])).toEqual(
          new Set(all.map((transaction) => transaction.id)),
        )
      }),
  )

  it.effect(
    "a user registered by a write that commits after later users were listed comes with the next read",
    () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        const commitSlow = yield* holdOpen(registerUser(partnerId))
        const quick = yield* Effect.forEach([1, 2, 3], () => registerUser(partnerId))
        const read = (cursor: string | undefined) =>
          follow((at) => findUsers(partnerId, { limit: 1, cursor: at }), cursor)
        const early = yield* read(undefined)
        expect(early.items.map((user) => user.id)).toEqual(quick)
        yield* commitSlow
        const all = (yield* findUsers(partnerId, { limit: 100 })).data.map((user) => user.id)
        expect(all).toHaveLength(4)
        // Its id was taken first: it sorts before every user the first read gave.
        expect(quick).not.toContain(all[0])
        const again = yield* read(early.lastCursor)
        const given = new Set([...early.items, ...again.items].map((user) => user.id))
        expect(given).toEqual(new Set(all))
      }),
  )

  it.effect(
    "a cursor whose sealed part was altered, made up or moved to another row is refused (GH1006)",
    () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        const [user] = yield* twoUsers(partnerId)
        for (const amount of [1, 2, 3]) yield* addPoints(partnerId, user, amount)
        const first = yield* listPublicEvents(partnerId, { limit: 1 })
        const second = yield* listPublicEvents(partnerId, { limit: 1, cursor: first.next_cursor ?? "" })
        const [key, sealed] = Buffer.from(first.next_cursor ?? "", "base64url")
          .toString()
          .split(";")
        const [, otherSealed] = Buffer.from(second.next_cursor ?? "", "base64url")
          .toString()
          .split(";")
        expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/)
        const cursorOf = (text: string) => Buffer.from(text).toString("base64url")
        for (const cursor of [
          cursorOf(`${key};${sealed?.slice(0, -2)}AA`),
          cursorOf(`${key};${otherSealed}`),
          cursorOf(`${key};AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`),
        ]) {
          const refused = yield* Effect.flip(listPublicEvents(partnerId, { limit: 1, cursor }))
          expect(refused).toMatchObject({ code: "GH1006", field: "cursor" })
        }
      }),
  )
})

layer(projectionDatabase({ poolSize: 45 }))("lists and rows that commit late: progress", (it) => {
  it.effect(
    "pages go forward however many writes are in progress (40 open transactions): none given twice",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = yield* registerPartner()
        const [user] = yield* twoUsers(partnerId)
        // 40 transactions that have taken their transaction numbers, open while the list is read.
        const commits = yield* Effect.forEach(
          Array.from({ length: 40 }, (_, n) => n),
          () => holdOpen(sql`SELECT pg_current_xact_id()`),
        )
        for (const amount of [1, 2, 3, 4, 5]) yield* addPoints(partnerId, user, amount)
        const all = yield* storedIds(partnerId)
        const walked = yield* follow((cursor) => listPublicEvents(partnerId, { limit: 2, cursor }), undefined)
        expect(walked.items.map((event) => event.id)).toEqual(all)
        expect(walked.pages).toBe(Math.ceil(all.length / 2))
        yield* Effect.all(commits, { discard: true })
      }),
  )

  it.effect(
    "rows restored from another server's dump (transaction numbers not reached here) are paged once",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partnerId = yield* registerPartner()
        yield* Effect.forEach([1, 2, 3, 4, 5], () => registerUser(partnerId))
        // As pg_restore leaves them: the other server's numbers, far ahead of this one's.
        yield* sql`
        UPDATE users SET transaction_id = ((pg_current_xact_id()::text)::bigint + 1000000)::text::xid8
        WHERE partner_id = ${partnerId}`
        const all = (yield* findUsers(partnerId, { limit: 100 })).data.map((user) => user.id)
        expect(all).toHaveLength(5)
        const walked = yield* follow((cursor) => findUsers(partnerId, { limit: 2, cursor }), undefined)
        expect(walked.items.map((user) => user.id)).toEqual(all)
        expect(walked.pages).toBe(3)
      }),
  )
})

import { describe, expect, layer } from "@effect/vitest"
import { cursorKey, encodeCursor, InvalidParams, type PartnerId } from "@points/domain"
import { Effect, Option } from "effect"
import { findTransactions, findUsers, type Page, type UserResource } from "../../src/index.js"
import { activeUser, addPoints, projectionDatabase, registerPartner, registerUser } from "./commands.js"

/** Follows next_cursor to the end (at most 50 pages), returning every page. */
const allPages = <A, E, R>(
  read: (cursor: string | undefined) => Effect.Effect<Page<A>, E, R>,
): Effect.Effect<ReadonlyArray<Page<A>>, E, R> =>
  Effect.gen(function* () {
    const pages: Array<Page<A>> = []
    let cursor: string | undefined
    for (let n = 0; n < 50; n++) {
      const page = yield* read(cursor)
      pages.push(page)
      if (page.next_cursor === null) return pages
      cursor = page.next_cursor
    }
    throw new Error("more than 50 pages")
  })

const invalid = (field: string) => (error: unknown) => {
  expect(error).toBeInstanceOf(InvalidParams)
  expect((error as InvalidParams).field).toBe(field)
  expect((error as InvalidParams).code).toBe("GH1006")
}

const registerMany = (partnerId: PartnerId, count: number, partnerUserId?: string) =>
  Effect.forEach(
    Array.from({ length: count }, (_, n) => n),
    () => registerUser(partnerId, partnerUserId === undefined ? {} : { partnerUserId }),
  )

layer(projectionDatabase())("keyset pagination", (it) => {
  it.effect("pages through more rows than a page holds, without gaps or duplicates, oldest first", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const other = yield* registerPartner()
      const ids = yield* registerMany(partnerId, 45)
      yield* registerMany(other, 5)
      const pages = yield* allPages((cursor) => findUsers(partnerId, { limit: 20, cursor }))
      expect(pages.map((page) => page.data.length)).toEqual([20, 20, 5])
      expect(pages.flatMap((page) => page.data.map((user) => user.id))).toEqual(ids)
      // The default page is 20; a page of 100 holds everything, and says there is no more.
      const first = yield* findUsers(partnerId, {})
      expect(first.data).toHaveLength(20)
      // The same place: cursors of one page name one row (what each read saw is sealed afresh each time).
      expect(cursorKey("users", first.next_cursor ?? "")).toEqual(
        cursorKey("users", pages[0]?.next_cursor ?? ""),
      )
      expect(Option.isSome(cursorKey("users", first.next_cursor ?? ""))).toBe(true)
      const whole = yield* findUsers(partnerId, { limit: 100 })
      expect(whole.data.map((user) => user.id)).toEqual(ids)
      expect(whole.next_cursor).toBeNull()
      // Exactly a page's worth: no cursor to an empty page.
      const exact = yield* findUsers(partnerId, { limit: 45 })
      expect(exact.next_cursor).toBeNull()
    }),
  )

  it.effect("keeps its place when rows arrive between pages: new rows come at the end, none twice", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const before = yield* registerMany(partnerId, 7)
      const seen: Array<UserResource> = []
      const first = yield* findUsers(partnerId, { limit: 5 })
      seen.push(...first.data)
      const after = yield* registerMany(partnerId, 3)
      const rest = yield* allPages((cursor) =>
        findUsers(partnerId, { limit: 5, cursor: cursor ?? first.next_cursor ?? undefined }),
      )
      seen.push(...rest.flatMap((page) => page.data))
      expect(seen.map((user) => user.id)).toEqual([...before, ...after])
    }),
  )

  it.effect("pages with filters: a partner_user_id, a user's transactions", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const twins = yield* registerMany(partnerId, 3, "twin")
      yield* registerMany(partnerId, 2)
      const twinPages = yield* allPages((cursor) =>
        findUsers(partnerId, { partner_user_id: "twin", limit: 2, cursor }),
      )
      expect(twinPages.flatMap((page) => page.data.map((user) => user.id))).toEqual(twins)

      const userId = yield* activeUser(partnerId)
      const otherUser = yield* activeUser(partnerId)
      const transactions = yield* Effect.forEach(
        Array.from({ length: 25 }, (_, n) => n + 1),
        (amount) => addPoints(partnerId, userId, amount),
      )
      yield* addPoints(partnerId, otherUser, 5)
      const pages = yield* allPages((cursor) =>
        findTransactions(partnerId, { user_id: userId, limit: 10, cursor }),
      )
      expect(pages.map((page) => page.data.length)).toEqual([10, 10, 5])
      const listed = pages.flatMap((page) => page.data)
      expect(listed.map((transaction) => transaction.id)).toEqual(transactions)
      expect(listed.at(-1)?.balance_after).toBe((25 * 26) / 2)
    }),
  )

  it.effect("a transactions cursor naming another partner's transaction starts nowhere (an empty page)", () =>
    Effect.gen(function* () {
      const partnerId = yield* registerPartner()
      const other = yield* registerPartner()
      const userId = yield* activeUser(partnerId)
      const otherUser = yield* activeUser(other)
      yield* addPoints(other, otherUser, 1)
      for (let n = 0; n < 3; n++) yield* addPoints(partnerId, userId, 1)
      yield* addPoints(other, otherUser, 1)
      const theirs = (yield* findTransactions(other, {})).data
      expect(theirs).toHaveLength(2)
      // Their first transaction lies before all of ours in the log: read by its position, it would list ours.
      const cursor = encodeCursor("transactions", theirs[0]?.id ?? "")
      expect((yield* findTransactions(partnerId, { cursor })).data).toEqual([])
      // Our own cursor still works.
      const first = yield* findTransactions(partnerId, { limit: 1 })
      const rest = yield* findTransactions(partnerId, { cursor: first.next_cursor ?? "" })
      expect(rest.data).toHaveLength(2)
    }),
  )

  describe("bad requests are GH1006 naming the parameter", () => {
    it.effect("a cursor that is not one of ours", () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        yield* registerMany(partnerId, 3)
        const valid = (yield* findUsers(partnerId, { limit: 1 })).next_cursor ?? ""
        for (const cursor of [
          "garbage",
          "",
          encodeCursor("users", "not-a-uuid"),
          // A cursor of another list, of a row that exists: it would start this list at an arbitrary place.
          encodeCursor("transactions", (yield* findUsers(partnerId, { limit: 1 })).data[0]?.id ?? ""),
          // The same bytes written with padding.
          `${valid}==`,
          `${valid}!`,
          `${valid}A`,
          "x".repeat(500),
        ]) {
          invalid("cursor")(yield* Effect.flip(findUsers(partnerId, { cursor })))
        }
        expect((yield* findUsers(partnerId, { cursor: valid, limit: 10 })).data).toHaveLength(2)
      }),
    )

    it.effect("a limit outside 1..100", () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        for (const limit of [0, -1, 101, 2.5, Number.NaN]) {
          invalid("limit")(yield* Effect.flip(findUsers(partnerId, { limit })))
          invalid("limit")(yield* Effect.flip(findTransactions(partnerId, { limit })))
        }
        expect((yield* findUsers(partnerId, { limit: 1 })).data).toEqual([])
        expect((yield* findUsers(partnerId, { limit: 100 })).data).toEqual([])
      }),
    )
  })
})

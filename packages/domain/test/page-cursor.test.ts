import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import {
  cursorKey,
  cursorPosition,
  encodeCursor,
  idAsIssued,
  MAX_WRITES_IN_PROGRESS,
  writesSeenOf,
} from "../src/index.js"

const id = "01a2014e-b620-72ff-8803-d383bbc69108"

describe("A page cursor", () => {
  it("gives back the id it was made of, in the list it was made for only", () => {
    const cursor = encodeCursor("orders", id)
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(cursorKey("orders", cursor)).toEqual(Option.some(id))
    expect(cursorKey("users", cursor)).toEqual(Option.none())
    expect(cursorKey("transactions", encodeCursor("events", id))).toEqual(Option.none())
  })

  it("is only the exact text made: other spellings of its bytes, other keys and long texts are none", () => {
    const cursor = encodeCursor("users", id)
    for (const text of [
      `${cursor}==`,
      `${cursor}!`,
      cursor.slice(1),
      encodeCursor("users", id.toUpperCase()),
      encodeCursor("users", "not-a-uuid"),
      Buffer.from(id).toString("base64url"),
      "",
      "x".repeat(10_000),
    ]) {
      expect(cursorKey("users", text), text.slice(0, 60)).toEqual(Option.none())
    }
  })
})

describe("A cursor that records what its page's read saw", () => {
  const seen = { before: 1_000n, upTo: 1_010n, inProgress: [1_003n, 1_007n] }

  it("gives back its id and the writes seen; its list's plain cursors still read as before", () => {
    const cursor = encodeCursor("events", id, seen)
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(cursorPosition("events", cursor)).toEqual(Option.some({ key: id, seen }))
    expect(cursorKey("events", cursor)).toEqual(Option.some(id))
    expect(cursorPosition("events", encodeCursor("events", id))).toEqual(Option.some({ key: id, seen: null }))
    expect(cursorPosition("orders", cursor)).toEqual(Option.none())
  })

  it("keeps at most MAX_WRITES_IN_PROGRESS writes in progress: with more, it records seeing none of them", () => {
    const many = Array.from({ length: MAX_WRITES_IN_PROGRESS + 1 }, (_, n) => 1_000n + BigInt(n))
    const cursor = encodeCursor("events", id, { before: 1_000n, upTo: 2_000n, inProgress: many })
    expect(cursorPosition("events", cursor)).toEqual(
      Option.some({ key: id, seen: { before: 1_000n, upTo: 1_000n, inProgress: [] } }),
    )
    const all = Array.from({ length: MAX_WRITES_IN_PROGRESS }, (_, n) => 1_000n + BigInt(n))
    const kept = encodeCursor("events", id, { before: 1_000n, upTo: 2_000n, inProgress: all })
    expect(Option.map(cursorPosition("events", kept), (position) => position.seen?.inProgress)).toEqual(
      Option.some(all),
    )
  })

  it("is none when what it says was seen is no snapshot: out of range, unordered, too long, not numbers", () => {
    for (const text of [
      "5:3:",
      "0:3:",
      "1:9:2,2",
      "1:9:5,3",
      "3:9:2",
      "3:9:9",
      "3:9:x",
      "3:9",
      "03:9:",
      "3:9:4,",
      "1:99999999999999999999:",
      `1:${2n ** 63n}:`,
      `1:100:${Array.from({ length: MAX_WRITES_IN_PROGRESS + 1 }, (_, n) => n + 2).join(",")}`,
    ]) {
      expect(writesSeenOf(text), text).toEqual(Option.none())
      const cursor = Buffer.from(`events:${id};${text}`).toString("base64url")
      expect(cursorPosition("events", cursor), text).toEqual(Option.none())
    }
    expect(writesSeenOf("3:9:4,8")).toEqual(Option.some({ before: 3n, upTo: 9n, inProgress: [4n, 8n] }))
    expect(cursorPosition("events", Buffer.from(`events:${id};3:9:`).toString("base64url"))).toEqual(
      Option.some({ key: id, seen: { before: 3n, upTo: 9n, inProgress: [] } }),
    )
    expect(cursorPosition("events", Buffer.from(`events:${id};3:9:;1:2:`).toString("base64url"))).toEqual(
      Option.none(),
    )
  })
})

describe("An id as issued", () => {
  it("is a UUID in lower case, whatever case it was written in; other texts are left as written", () => {
    expect(idAsIssued(id.toUpperCase())).toBe(id)
    expect(idAsIssued(id)).toBe(id)
    expect(idAsIssued("ABC")).toBe("ABC")
    expect(idAsIssued(`${id.toUpperCase()} `)).toBe(`${id.toUpperCase()} `)
  })
})

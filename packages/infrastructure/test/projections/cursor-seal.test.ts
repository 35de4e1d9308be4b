import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { openCursorSeal, sealForCursor } from "../../src/projections/cursor-seal.js"
import {
  cursorWritesSeen,
  MAX_WRITES_IN_PROGRESS,
  writesSeenOf,
  writesSeenText,
} from "../../src/projections/writes-seen.js"

const secret = Buffer.alloc(32, 7)
const other = Buffer.alloc(32, 8)

describe("What a cursor carries of its page's read", () => {
  it("is sealed: opened only with the database's key, for the cursor's own list and row", () => {
    const token = sealForCursor(secret, "events:row-1", "1000:1010:1003,1007")
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/)
    // Nothing of the transaction numbers shows: they count every partner's writes.
    expect(Buffer.from(token, "base64url").toString("latin1")).not.toContain("1000")
    expect(sealForCursor(secret, "events:row-1", "1000:1010:1003,1007")).not.toBe(token)
    expect(openCursorSeal(secret, "events:row-1", token)).toEqual(Option.some("1000:1010:1003,1007"))
    expect(openCursorSeal(other, "events:row-1", token)).toEqual(Option.none())
    expect(openCursorSeal(secret, "events:row-2", token)).toEqual(Option.none())
    expect(openCursorSeal(secret, "transactions:row-1", token)).toEqual(Option.none())
    const bytes = Buffer.from(token, "base64url")
    bytes[14] = (bytes[14] ?? 0) ^ 1
    expect(openCursorSeal(secret, "events:row-1", bytes.toString("base64url"))).toEqual(Option.none())
    for (const made of ["", "AAAA", "x".repeat(60)]) {
      expect(openCursorSeal(secret, "events:row-1", made)).toEqual(Option.none())
    }
  })

  it("reads a PostgreSQL snapshot, and refuses what is none: out of range, unordered, too long, not numbers", () => {
    expect(writesSeenOf("3:9:4,8")).toEqual(Option.some({ before: 3n, upTo: 9n, inProgress: [4n, 8n] }))
    expect(writesSeenOf("3:9:")).toEqual(Option.some({ before: 3n, upTo: 9n, inProgress: [] }))
    expect(writesSeenText({ before: 3n, upTo: 9n, inProgress: [4n, 8n] })).toBe("3:9:4,8")
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
    }
  })

  it("keeps at most MAX_WRITES_IN_PROGRESS writes in progress: with more, it records seeing none of them", () => {
    const many = Array.from({ length: MAX_WRITES_IN_PROGRESS + 1 }, (_, n) => 1_000n + BigInt(n))
    expect(cursorWritesSeen({ before: 1_000n, upTo: 2_000n, inProgress: many })).toEqual({
      before: 1_000n,
      upTo: 1_000n,
      inProgress: [],
    })
    const all = many.slice(0, MAX_WRITES_IN_PROGRESS)
    expect(cursorWritesSeen({ before: 1_000n, upTo: 2_000n, inProgress: all }).inProgress).toEqual(all)
    expect(writesSeenOf(writesSeenText({ before: 1_000n, upTo: 2_000n, inProgress: all }))).toEqual(
      Option.some({ before: 1_000n, upTo: 2_000n, inProgress: all }),
    )
  })
})

import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { openCursorSeal, sealForCursor } from "../../src/projections/cursor-seal.js"
import {
  compactWritesSeen,
  writesSeenOf,
  writesSeenOfCompact,
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
    ]) {
      expect(writesSeenOf(text), text).toEqual(Option.none())
    }
  })

  it("is written short for the cursor, every write in progress kept, and read back exactly", () => {
    const many = Array.from({ length: 300 }, (_, n) => 5_000_000n + BigInt(n * 3))
    for (const seen of [
      { before: 3n, upTo: 9n, inProgress: [] },
      { before: 3n, upTo: 9n, inProgress: [3n, 8n] },
      { before: 5_000_000n, upTo: 6_000_000n, inProgress: many },
      { before: 2n ** 62n, upTo: 2n ** 62n + 10n, inProgress: [2n ** 62n + 1n] },
    ]) {
      const text = compactWritesSeen(seen)
      expect(text).toMatch(/^[0-9a-z:,]+$/)
      expect(writesSeenOfCompact(text)).toEqual(Option.some(seen))
    }
    // 300 writes in progress three apart: one character each, a comma between.
    expect(compactWritesSeen({ before: 5_000_000n, upTo: 6_000_000n, inProgress: many }).length).toBeLessThan(
      620,
    )
    for (const text of [
      "3:6:0,0",
      "3:6:7",
      "3:6:A",
      "3:-1:",
      "3:6",
      "03:6:",
      "3:6:1,",
      `3:${"z".repeat(14)}:`,
    ]) {
      expect(writesSeenOfCompact(text), text).toEqual(Option.none())
    }
  })
})

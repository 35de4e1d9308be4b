import { describe, expect, it } from "@effect/vitest"
import { uuidV7 } from "../../src/index.js"

describe("uuidV7", () => {
  it("makes RFC 9562 version 7 ids, unique and strictly increasing across many refills of its random buffer", () => {
    const ids = Array.from({ length: 20_000 }, () => uuidV7())
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.every((id, n) => n === 0 || (ids[n - 1] as string) < id)).toBe(true)
    // The leading 48 bits are the creation time in milliseconds.
    const millis = Number.parseInt((ids.at(-1) as string).replaceAll("-", "").slice(0, 12), 16)
    expect(Math.abs(millis - Date.now())).toBeLessThan(60_000)
  })
})

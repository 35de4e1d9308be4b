import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { cursorKey, cursorPosition, encodeCursor, idAsIssued } from "../src/index.js"

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

describe("A cursor that carries a token of what its page's read saw", () => {
  const token = "c2VhbGVkLWJ5LXRoZS1zdG9yZQ"

  it("gives back its id and the token; its list's plain cursors still read as before", () => {
    const cursor = encodeCursor("events", id, token)
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(cursorPosition("events", cursor)).toEqual(Option.some({ key: id, seen: token }))
    expect(cursorKey("events", cursor)).toEqual(Option.some(id))
    expect(cursorPosition("events", encodeCursor("events", id))).toEqual(Option.some({ key: id, seen: null }))
    expect(cursorPosition("orders", cursor)).toEqual(Option.none())
  })

  it("is none when the token is not base64url, is empty or too long, or comes with more", () => {
    for (const text of [
      `events:${id};`,
      `events:${id};a:b`,
      `events:${id};a+b`,
      `events:${id};${"a".repeat(12_001)}`,
      `events:${id};${token};${token}`,
    ]) {
      expect(cursorPosition("events", Buffer.from(text).toString("base64url")), text.slice(0, 60)).toEqual(
        Option.none(),
      )
    }
    const longest = encodeCursor("events", id, "a".repeat(12_000))
    expect(Option.isSome(cursorPosition("events", longest))).toBe(true)
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

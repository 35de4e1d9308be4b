import { describe, expect, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import { instantOf, millisecondBoundOf, Timestamp, timestampProblem } from "../src/index.js"

const malformed = "must be an ISO-8601 timestamp with a time zone, e.g. 2025-01-31T12:00:00Z"
const impossible = "must be a real date and time, e.g. 2025-01-31T12:00:00Z"
const outOfRange = "must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z"

describe("A request's timestamp", () => {
  it("names the instant of its date, time and zone", () => {
    expect(instantOf("2025-01-31T12:00:00Z")?.toISOString()).toBe("2025-01-31T12:00:00.000Z")
    expect(instantOf("2025-01-31T12:00Z")?.toISOString()).toBe("2025-01-31T12:00:00.000Z")
    expect(instantOf("2025-01-31t12:00:00z")?.toISOString()).toBe("2025-01-31T12:00:00.000Z")
    expect(instantOf("2025-01-31T12:00:00.123456789+05:30")?.toISOString()).toBe("2025-01-31T06:30:00.123Z")
    expect(instantOf("2024-02-29T23:00:00-02:00")?.toISOString()).toBe("2024-03-01T01:00:00.000Z")
    // ISO 8601 sets no limit on a fraction's digits.
    expect(instantOf("2025-01-31T12:00:00.8760000000000Z")?.toISOString()).toBe("2025-01-31T12:00:00.876Z")
  })

  it("as a bound on millisecond timestamps, is the first millisecond at or after its instant", () => {
    const bound = (text: string) => millisecondBoundOf(text)?.toISOString()
    expect(bound("2025-01-31T12:00:00.9581Z")).toBe("2025-01-31T12:00:00.959Z")
    expect(bound("2025-01-31T12:00:00.958000001+01:00")).toBe("2025-01-31T11:00:00.959Z")
    expect(bound("2025-01-31T12:00:59.9999Z")).toBe("2025-01-31T12:01:00.000Z")
    expect(bound("2025-01-31T12:00:00.9580000000001Z")).toBe("2025-01-31T12:00:00.959Z")
    // Exactly on a millisecond (zeros past it included), it is that millisecond.
    expect(bound("2025-01-31T12:00:00.958000Z")).toBe("2025-01-31T12:00:00.958Z")
    expect(bound("2025-01-31T12:00Z")).toBe("2025-01-31T12:00:00.000Z")
    // Past the last millisecond the platform reads is out of range, not bound at it.
    expect(bound("9999-12-31T23:59:59.9991Z")).toBeUndefined()
    expect(bound("9999-12-31T23:59:59.998001Z")).toBe("9999-12-31T23:59:59.999Z")
    expect(bound("2025-02-30T00:00:00.5Z")).toBeUndefined()
  })

  it("is refused without a zone, or in another shape", () => {
    for (const text of [
      "yesterday",
      "2025-01-31",
      "2025-01-31T12:00:00",
      "2025-01-31 12:00:00Z",
      "1738324800",
    ]) {
      expect(instantOf(text), text).toBeNull()
      expect(timestampProblem(text), text).toBe(malformed)
    }
  })

  it("is refused when its date or time does not exist, instead of rolling over", () => {
    for (const text of [
      "2025-02-30T00:00:00Z",
      "2025-02-29T00:00:00Z",
      "2100-02-29T00:00:00Z",
      "2025-04-31T00:00:00Z",
      "2025-13-01T00:00:00Z",
      "2025-00-10T00:00:00Z",
      "2025-01-00T00:00:00Z",
      "2025-01-31T24:00:00Z",
      "2025-01-31T12:60:00Z",
      "2025-01-31T12:00:60Z",
      "2025-01-31T12:00:00+24:00",
    ]) {
      expect(instantOf(text), text).toBeNull()
      expect(timestampProblem(text), text).toBe(impossible)
    }
    expect(instantOf("2000-02-29T00:00:00Z")).not.toBeNull()
  })

  it("is refused outside the years 1 to 9999 in UTC, which PostgreSQL and toISOString agree on", () => {
    for (const text of [
      "0000-01-01T00:00:00Z",
      "9999-12-31T23:59:59-14:00",
      "0001-01-01T00:30:00+01:00",
      "9999-12-31T23:59:59.9990001Z",
    ]) {
      expect(instantOf(text), text).toBeNull()
      expect(timestampProblem(text), text).toBe(outOfRange)
    }
    expect(instantOf("0001-01-01T00:00:00Z")?.toISOString()).toBe("0001-01-01T00:00:00.000Z")
    expect(instantOf("9999-12-31T23:59:59.999Z")?.toISOString()).toBe("9999-12-31T23:59:59.999Z")
    expect(instantOf("9999-12-31T23:59:59.999000Z")?.toISOString()).toBe("9999-12-31T23:59:59.999Z")
    // Year 0 in a zone west of UTC is already year 1 in UTC.
    expect(instantOf("0000-12-31T23:30:00-01:00")?.toISOString()).toBe("0001-01-01T00:30:00.000Z")
  })

  it("as a schema, keeps the text and fails with the problem", () => {
    expect(Schema.decodeUnknownSync(Timestamp)("2025-01-31T12:00:00Z")).toBe("2025-01-31T12:00:00Z")
    const refused = Schema.decodeUnknownEither(Timestamp)("2025-02-30T00:00:00Z")
    expect(
      Either.isLeft(refused) &&
        ParseResult.ArrayFormatter.formatErrorSync(refused.left).map((issue) => issue.message),
    ).toEqual([impossible])
  })
})

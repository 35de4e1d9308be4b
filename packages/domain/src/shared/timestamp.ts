import { Schema } from "effect"

// A calendar date, a time to the minute at least, and a zone: what "ISO-8601 timestamp" means in a request.
const shape =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/

// The instants every part of the platform agrees on: PostgreSQL's timestamptz refuses year 0, and
// `Date.toISOString` writes years past 9999 in a form PostgreSQL does not read.
const earliest = new Date(0).setUTCFullYear(1, 0, 1)
const latest = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

const daysIn = (year: number, month: number): number =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

type Reading = Date | "malformed" | "impossible" | "out of range"

const read = (text: string): Reading => {
  const parts = shape.exec(text)
  if (parts === null) return "malformed"
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] =
    [...parts.slice(1, 7), ...parts.slice(9, 11)].map((part) => Number(part ?? 0))
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return "impossible"
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return "impossible"
  const milliseconds = Number((parts[7] ?? "").padEnd(3, "0").slice(0, 3))
  const pastLastMillisecond = /[1-9]/.test((parts[7] ?? "").slice(3))
  const offset = (parts[8] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes)
  // setUTCFullYear, unlike Date.UTC, takes the years 0 to 99 as they are (not as 1900 to 1999).
  const local = new Date(0)
  local.setUTCFullYear(year, month - 1, day)
  local.setUTCHours(hour, minute, second, milliseconds)
  const instant = local.getTime() - offset * 60_000
  // 23:59:59.9995 on the last day lies past the last millisecond, though it reads as that millisecond.
  const inRange = instant >= earliest && (instant < latest || (instant === latest && !pastLastMillisecond))
  return inRange ? new Date(instant) : "out of range"
}

const problems = {
  malformed: "must be an ISO-8601 timestamp with a time zone, e.g. 2025-01-31T12:00:00Z",
  impossible: "must be a real date and time, e.g. 2025-01-31T12:00:00Z",
  "out of range": "must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z",
} as const

/** What is wrong with a request's timestamp, as a GH1006 message says it; undefined when nothing is. */
export const timestampProblem = (text: string): string | undefined => {
  const reading = read(text)
  return reading instanceof Date ? undefined : problems[reading]
}

/**
 * The instant a request's timestamp names (ISO-8601 with a time zone, a real date and time, years 1 to 9999
 * in UTC), or null when it names none. Fractions of a second past the millisecond are dropped.
 */
export const instantOf = (text: string): Date | null => {
  const reading = read(text)
  return reading instanceof Date ? reading : null
}

/**
 * A request's timestamp as a bound on the platform's timestamps, which are kept to the millisecond: the first
 * millisecond at or after the instant it names (so `since=...:00.9581Z` leaves out an event at `.958`, and
 * `until` likewise), or null when it names none. An instant in range has a next millisecond in range too.
 */
export const millisecondBoundOf = (text: string): Date | null => {
  const instant = instantOf(text)
  if (instant === null) return null
  const pastMillisecond = (shape.exec(text)?.[7] ?? "").slice(3)
  return /[1-9]/.test(pastMillisecond) ? new Date(instant.getTime() + 1) : instant
}

/**
 * A timestamp as a request gives it (`since`, `until`): ISO-8601 with a time zone, a real date and time, in
 * the years 1 to 9999. Kept as the text; `instantOf` reads it.
 */
export const Timestamp = Schema.String.pipe(
  Schema.filter((text) => timestampProblem(text) ?? true, {
    description: "an ISO-8601 timestamp with a time zone, e.g. 2025-01-31T12:00:00Z",
    // Documented (a JSON Schema annotation makes the OpenAPI document carry the description).
    jsonSchema: {},
  }),
)

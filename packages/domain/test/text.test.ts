import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Either, FastCheck, JSONSchema, ParseResult, Schema } from "effect"
import {
  Description,
  DisplayName,
  Email,
  Label,
  Limits,
  MAX_POINTS,
  Partner,
  PartnerUserId,
  Points,
  RecordedLabel,
  ReferenceId,
  Sku,
  Text,
  WebhookEndpoint,
} from "../src/index.js"

const problemOf = (schema: Schema.Schema.AnyNoContext, input: unknown): string | undefined => {
  const result = Schema.decodeUnknownEither(schema)(input)
  return Either.isLeft(result)
    ? ParseResult.ArrayFormatter.formatErrorSync(result.left)[0]?.message
    : undefined
}

const lone = ["\ud800", "\udfff", "a\udc00b", "\ud83d"]
const everyText = [
  ["Text", Text],
  ["PartnerUserId", PartnerUserId],
  ["ReferenceId", ReferenceId],
  ["DisplayName", DisplayName],
  ["Description", Description],
  ["Sku", Sku],
] as const

describe("The text of a request", () => {
  it("refuses an unpaired surrogate, which PostgreSQL refuses in jsonb", () => {
    for (const [name, schema] of everyText) {
      for (const text of lone) expect(problemOf(schema, text), name).toBe("must be valid Unicode text")
      expect(problemOf(schema, "emoji 😀 and é"), name).toBeUndefined()
    }
    expect(problemOf(Email, "a\ud800@example.com")).toBe("must be valid Unicode text")
    expect(problemOf(WebhookEndpoint.WebhookUrl, "https://hooks.example.com/\ud800")).toBe(
      "must be valid Unicode text",
    )
  })

  it("refuses a NUL character anywhere, ids and filters included", () => {
    for (const [name, schema] of everyText) {
      expect(problemOf(schema, "a\u0000b"), name).toBe("must not contain NUL characters")
    }
  })

  it("counts its length in characters (code points), not UTF-16 code units", () => {
    expect(problemOf(DisplayName, "😀".repeat(200))).toBeUndefined()
    expect(problemOf(DisplayName, "😀".repeat(201))).toBe("must be at most 200 characters")
    expect(problemOf(DisplayName, "n".repeat(201))).toBe("must be at most 200 characters")
    expect(problemOf(Sku, "𝄞".repeat(100))).toBeUndefined()
    expect(
      problemOf(WebhookEndpoint.WebhookUrl, `https://hooks.example.com/${"é".repeat(2000)}`),
    ).toBeUndefined()
    expect(problemOf(WebhookEndpoint.WebhookUrl, `https://h.example.com/${"x".repeat(2048)}`)).toBe(
      "must be at most 2048 characters",
    )
  })

  it("takes each field up to its limit of DESIGN.md section 2, and refuses one character more", () => {
    const email = (length: number) => `${"a".repeat(length - "@example.com".length)}@example.com`
    for (const [name, schema, limit, at] of [
      ["PartnerUserId", PartnerUserId, Limits.partnerUserId, (n: number) => "p".repeat(n)],
      ["ReferenceId", ReferenceId, Limits.referenceId, (n: number) => "r".repeat(n)],
      ["Email", Email, Limits.email, email],
      ["DisplayName", DisplayName, Limits.name, (n: number) => "n".repeat(n)],
      ["Label", Label, Limits.name, (n: number) => "l".repeat(n)],
      ["Description", Description, Limits.description, (n: number) => "d".repeat(n)],
      ["Sku", Sku, Limits.sku, (n: number) => "S".repeat(n)],
    ] as const) {
      expect(problemOf(schema, at(limit)), name).toBeUndefined()
      expect(problemOf(schema, at(limit + 1)), name).toBe(`must be at most ${limit} characters`)
    }
    expect([Limits.partnerUserId, Limits.email, Limits.description, Limits.sku]).toEqual([
      255, 320, 1000, 100,
    ])
  })

  it("takes a name an operator gives (Label) with something visible and no control character", () => {
    for (const name of ["Acme Rewards", "é 日本 😀", " padded ", "-"])
      expect(problemOf(Label, name), name).toBeUndefined()
    const control = "must not contain control characters (line breaks, tabs, escapes, direction marks)"
    for (const name of [
      "Evil\nid 0000",
      "a\rb",
      "Tab\there",
      "Red\u001b[31m",
      "del\u007f",
      "next\u0085line",
    ]) {
      expect(problemOf(Label, name), JSON.stringify(name)).toBe(control)
    }
    for (const name of ["right\u202eto left", "isolate\u2067x", "line\u2028separator"]) {
      expect(problemOf(Label, name), JSON.stringify(name)).toBe(control)
    }
    // Joiners inside emoji are no control: a family emoji is a name.
    expect(problemOf(Label, "\u{1f468}\u200d\u{1f469}\u200d\u{1f467}")).toBeUndefined()
    for (const name of [" ", "   ", "\u00a0", "\u2003\u3000", "\u200b", "\u3164", " \u200b\u2060 "]) {
      expect(problemOf(Label, name), JSON.stringify(name)).toBe("must not be blank")
    }
    expect(problemOf(Label, "")).toBe("must not be empty")
    // Documented as one pattern: no control character, and something that is not white space.
    const documented = JSONSchema.make(Label).$defs?.Label as { readonly pattern?: string } | undefined
    const pattern = new RegExp(documented?.pattern ?? "", "u")
    expect(["Acme", " padded ", "é 日本"].every((name) => pattern.test(name))).toBe(true)
    expect(["   ", "a\nb", "a\u202eb", ""].some((name) => pattern.test(name))).toBe(false)
  })

  it("reads back a name its events recorded under older rules (RecordedLabel)", () => {
    const recorded = { partnerId: "01a2280f-aab6-7cf5-ba60-6c38863037d2", at: "2026-11-01T00:00:00.000Z" }
    for (const name of ["Evil\nid", "   "]) {
      const event = Schema.decodeUnknownEither(Partner.PartnerRegistered)({
        _tag: "PartnerRegistered",
        ...recorded,
        name,
      })
      expect(Either.isRight(event), JSON.stringify(name)).toBe(true)
      expect(problemOf(RecordedLabel, name)).toBeUndefined()
    }
  })

  it("takes an amount of points from 1 to MAX_POINTS (one billion), whole", () => {
    expect(MAX_POINTS).toBe(1_000_000_000)
    for (const amount of [1, 2, MAX_POINTS]) expect(problemOf(Points, amount), String(amount)).toBeUndefined()
    for (const amount of [0, -1, MAX_POINTS + 1, 1.5]) {
      expect(problemOf(Points, amount), String(amount)).toMatch(/integer|between/)
    }
  })

  it("is documented with its limit as JSON Schema maxLength, which counts code points too", () => {
    expect(JSONSchema.make(DisplayName)).toMatchObject({
      $defs: { DisplayName: { type: "string", maxLength: 200 } },
    })
    expect(JSONSchema.make(DisplayName).$defs?.DisplayName).not.toHaveProperty("minLength")
    expect(JSONSchema.make(Label)).toMatchObject({
      $defs: { Label: { type: "string", minLength: 1, maxLength: 200 } },
    })
    expect(JSONSchema.make(Text)).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "string",
    })
  })

  it("still generates valid values for property tests", () => {
    FastCheck.assert(
      FastCheck.property(Arbitrary.make(DisplayName), (name) => Schema.is(DisplayName)(name)),
      { numRuns: 200 },
    )
  })
})

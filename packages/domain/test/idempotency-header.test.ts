import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { IdempotencyKey, IdempotencyKeyRequired, InvalidParams } from "../src/index.js"

const parse = (raw: string | undefined, required = false) =>
  IdempotencyKey.parseIdempotencyKeyHeader(raw, { required })

const parsesTo = (raw: string, key: string) =>
  Effect.map(parse(raw), (parsed) => expect(parsed).toEqual(Option.some(key)))

const refused = (raw: string, problem: string) =>
  Effect.map(Effect.flip(parse(raw, true)), (error) => {
    expect(error).toEqual(new InvalidParams({ field: "Idempotency-Key", problem }))
    expect(error.code).toBe("GH1006")
    expect(error.status).toBe(400)
  })

describe("Idempotency-Key header", () => {
  it.effect("a bare value and the same value quoted are one key", () =>
    Effect.gen(function* () {
      yield* parsesTo("abc", "abc")
      yield* parsesTo('"abc"', "abc")
      yield* parsesTo(' \t"abc" ', "abc")
      yield* parsesTo("01936b2e-0000-7000-8000-0000000000d1", "01936b2e-0000-7000-8000-0000000000d1")
      yield* parsesTo("cart 42 / ~!", "cart 42 / ~!")
    }),
  )

  it.effect("a quoted value is unescaped as a structured-field string", () =>
    Effect.gen(function* () {
      yield* parsesTo('"say \\"hi\\""', 'say "hi"')
      yield* parsesTo('"a\\\\b"', "a\\b")
      yield* parsesTo('" padded "', " padded ")
    }),
  )

  it.effect("takes up to 255 characters, quoted or not", () =>
    Effect.gen(function* () {
      yield* parsesTo("k".repeat(255), "k".repeat(255))
      yield* parsesTo(`"${"k".repeat(255)}"`, "k".repeat(255))
      yield* refused("k".repeat(256), "must be at most 255 characters")
      yield* refused(`"${"k".repeat(256)}"`, "must be at most 255 characters")
    }),
  )

  it.effect("a header sent more than once is GH1006; sent once as a list of one, it is read as usual", () =>
    Effect.gen(function* () {
      const twice = yield* Effect.flip(
        IdempotencyKey.parseIdempotencyKeyHeader(["a", "b"], { required: true }),
      )
      expect(twice).toEqual(new InvalidParams({ field: "Idempotency-Key", problem: "must be sent once" }))
      const once = yield* IdempotencyKey.parseIdempotencyKeyHeader(['"a"'], { required: true })
      expect(once).toEqual(Option.some("a"))
      const none = yield* Effect.flip(IdempotencyKey.parseIdempotencyKeyHeader([], { required: true }))
      expect(none).toBeInstanceOf(IdempotencyKeyRequired)
    }),
  )

  it.effect("an empty value is GH1006, quoted or not, and the message names the header", () =>
    Effect.gen(function* () {
      yield* refused("", "must not be empty")
      yield* refused('""', "must not be empty")
      yield* refused("   ", "must not be empty")
      const error = yield* Effect.flip(parse(""))
      expect(error.message).toBe("Idempotency-Key must not be empty")
    }),
  )

  it.effect("non-printable or non-ASCII characters are GH1006", () =>
    Effect.gen(function* () {
      yield* refused("ab\u0001c", "must be printable ASCII characters")
      yield* refused("a\tb", "must be printable ASCII characters")
      yield* refused("clé", "must be printable ASCII characters")
      yield* refused("ab\u007f", "must be printable ASCII characters")
    }),
  )

  it.effect("a malformed quoted string is GH1006 rather than another key", () =>
    Effect.gen(function* () {
      yield* refused('"abc', "must be a bare value or a complete quoted string")
      yield* refused('abc"', "must be a bare value or a complete quoted string")
      yield* refused('"', "must be a bare value or a complete quoted string")
      yield* refused('"a"b"', 'must escape `"` inside quotes')
      yield* refused('"a\\b"', 'must escape only `"` and `\\` inside quotes')
      yield* refused('"a\\"', 'must escape only `"` and `\\` inside quotes')
    }),
  )

  it.effect("an absent header is IK1003 where required, and no key otherwise", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(parse(undefined, true))
      expect(error).toEqual(new IdempotencyKeyRequired())
      expect(error.code).toBe("IK1003")
      expect(error.status).toBe(400)
      expect(yield* parse(undefined, false)).toEqual(Option.none())
    }),
  )

  it("the key schema takes exactly 1..255 printable ASCII characters", () => {
    const decode = Schema.is(IdempotencyKey.IdempotencyKeyValue)
    expect([" ", "~", "a b", "k".repeat(255)].every(decode)).toBe(true)
    expect(["", "k".repeat(256), "\n", "é"].some(decode)).toBe(false)
  })
})

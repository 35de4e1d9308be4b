import { Effect, Either, Option, Schema } from "effect"
import { IdempotencyKeyRequired } from "../errors/idempotency-errors.js"
import { InvalidParams } from "../errors/request-errors.js"

/** The longest `Idempotency-Key` a client may send, in characters (after unquoting). */
export const MAX_KEY_LENGTH = 255

/** The name of the request header, also the `field` a refused value is reported under. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"

/** A client's idempotency key, unquoted: 1..255 printable ASCII characters (space to tilde). */
export const IdempotencyKeyValue = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(MAX_KEY_LENGTH, { message: () => `must be at most ${MAX_KEY_LENGTH} characters` }),
  Schema.pattern(/^[\x20-\x7e]+$/, { message: () => "must be printable ASCII characters" }),
  Schema.brand("IdempotencyKeyValue"),
  Schema.annotations({ identifier: "IdempotencyKeyValue" }),
)
export type IdempotencyKeyValue = typeof IdempotencyKeyValue.Type

const isPrintableAscii = (text: string): boolean => /^[\x20-\x7e]*$/.test(text)

// A quoted value is an RFC 8941 sf-string (what the IETF Idempotency-Key draft specifies): `\"` and `\\` are
// the only escapes, and a bare `"` inside is malformed. A value that merely starts or ends with a quote is
// refused rather than guessed at, so that `"abc` and `abc"` never silently become two other keys.
const unquote = (value: string): Either.Either<string, string> => {
  const opens = value.startsWith('"')
  const closes = value.length >= 2 && value.endsWith('"')
  if (!opens && !value.endsWith('"')) return Either.right(value)
  if (!(opens && closes)) return Either.left("must be a bare value or a complete quoted string")
  let key = ""
  for (let index = 1; index < value.length - 1; index++) {
    const char = value.charAt(index)
    if (char === "\\") {
      const next = value.charAt(index + 1)
      if (index + 1 >= value.length - 1 || (next !== '"' && next !== "\\")) {
        return Either.left('must escape only `"` and `\\` inside quotes')
      }
      key += next
      index++
    } else if (char === '"') {
      return Either.left('must escape `"` inside quotes')
    } else {
      key += char
    }
  }
  return Either.right(key)
}

/**
 * Reads the `Idempotency-Key` header (each field line the request carried): bare `abc` and quoted `"abc"`
 * name the same key. An empty, malformed, non-printable or over-long value is GH1006, and so is a header sent
 * more than once (which key was meant?); an absent header is IK1003 where the key is required, and otherwise
 * none (the caller then uses a random key, so nothing replays).
 */
export const parseIdempotencyKeyHeader = (
  raw: string | ReadonlyArray<string> | undefined,
  options: { readonly required: boolean },
): Effect.Effect<Option.Option<IdempotencyKeyValue>, InvalidParams | IdempotencyKeyRequired> => {
  if (raw === undefined || (typeof raw !== "string" && raw.length === 0)) {
    return options.required ? Effect.fail(new IdempotencyKeyRequired()) : Effect.succeed(Option.none())
  }
  const invalid = (problem: string) =>
    Effect.fail(new InvalidParams({ field: IDEMPOTENCY_KEY_HEADER, problem }))
  if (typeof raw !== "string") {
    const [only] = raw
    if (raw.length > 1 || only === undefined) return invalid("must be sent once")
    return parseIdempotencyKeyHeader(only, options)
  }
  // Surrounding spaces and tabs are not part of an HTTP field value (RFC 9110 5.5).
  const value = raw.replace(/^[ \t]+|[ \t]+$/g, "")
  if (!isPrintableAscii(value)) return invalid("must be printable ASCII characters")
  const unquoted = unquote(value)
  if (Either.isLeft(unquoted)) return invalid(unquoted.left)
  const key = unquoted.right
  if (key.length === 0) return invalid("must not be empty")
  if (key.length > MAX_KEY_LENGTH) return invalid(`must be at most ${MAX_KEY_LENGTH} characters`)
  return Effect.succeed(Option.some(IdempotencyKeyValue.make(key)))
}

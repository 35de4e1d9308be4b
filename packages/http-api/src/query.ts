import { type CursorList, cursorPosition, idAsIssued, MAX_GRACE_PERIOD_SECONDS, Text } from "@points/domain"
import { SchemaAST as AST, Either, Option, ParseResult, Schema } from "effect"
import { decodeProblems, type Problem, reportedIssue } from "./problems.js"

/**
 * A query parameter holding a whole number from `min` to `max`, written as a plain decimal integer (`0x10`,
 * `1e1`, ` 5` or `5.0` are refused, not read as numbers; leading zeros are read as they are).
 */
const decimalInteger = (options: {
  readonly min: number
  readonly max: number
  readonly default: number
  readonly description: string
}) => {
  const problem = `must be an integer from ${options.min} to ${options.max}`
  return Schema.transformOrFail(
    Schema.String.annotations({
      description: options.description,
      jsonSchema: {
        type: "integer",
        minimum: options.min,
        maximum: options.max,
        default: options.default,
        description: options.description,
      },
    }),
    Schema.Int.pipe(Schema.between(options.min, options.max, { message: () => problem })),
    {
      strict: true,
      decode: (text, _, ast) => {
        // Leading zeros are the same number (`005`, `0100`, however many); past them, a text of more than 12
        // digits is in no range used here.
        const digits = text.replace(/^0+(?=[0-9])/, "")
        const value = /^[0-9]+$/.test(text) && digits.length <= 12 ? Number(digits) : Number.NaN
        return value >= options.min && value <= options.max
          ? ParseResult.succeed(value)
          : ParseResult.fail(new ParseResult.Type(ast, text, problem))
      },
      encode: (value) => ParseResult.succeed(String(value)),
    },
  )
}

/** `limit`: 1..100 (default 20 when absent), from the query string. */
export const Limit = decimalInteger({
  min: 1,
  max: 100,
  default: 20,
  description: "How many items a page holds: a plain decimal integer from 1 to 100 (default 20)",
})

/** `grace_seconds`: how long a replaced secret keeps working, 0..30 days in seconds (default a day). */
export const GraceSeconds = decimalInteger({
  min: 0,
  max: MAX_GRACE_PERIOD_SECONDS,
  default: 86_400,
  description: `How long the replaced secret keeps working, in seconds: 0 ends it at once (default 86400, at most ${MAX_GRACE_PERIOD_SECONDS})`,
})

const cursorDescription =
  "Where the page starts: the previous page's `next_cursor` of the same list (absent for the first page)"

/** A cursor of that list, as its previous page gave it; any other text is refused with the other parameters. */
const Cursor = (list: CursorList) =>
  Text.pipe(
    Schema.filter((cursor) => Option.isSome(cursorPosition(list, cursor)), {
      message: () => "is not a valid cursor",
    }),
  ).annotations({
    description: cursorDescription,
    // Said again as the JSON Schema: the generator documents a refined string by its base alone.
    jsonSchema: { type: "string", description: cursorDescription },
  })

/** The paging parameters of a list: `limit` and a cursor of that list. */
export const pageQuery = (list: CursorList) => ({
  limit: Schema.optional(Limit),
  cursor: Schema.optional(Cursor(list)),
})

/** Query of a list that takes only the paging parameters. */
export const pagingQuery = (list: CursorList) => Schema.Struct(pageQuery(list))

/**
 * An id as a client may write it: a UUID in upper or mixed case is read as the lower-case id the platform
 * issued; anything else stays as written (and names nothing).
 */
const caseFolded = <I>(self: Schema.Schema<string, I>) =>
  Schema.transform(self, Schema.typeSchema(self), { strict: true, decode: idAsIssued, encode: (id) => id })

/** A path id: any string; an id that does not exist (or is malformed) is a 404 LE0002, not a 400. */
export const PathId = caseFolded(Schema.String)

/** An id in a body or a filter: a Text, case-folded when it is a UUID. */
export const IdText = caseFolded(Text)

// The query string as the platform hands it over: each parameter once (a string) or repeated (an array).
const RawQuery = Schema.Record({
  key: Schema.String,
  value: Schema.Union(Schema.String, Schema.Array(Schema.String)),
})

/**
 * The query parameters of an endpoint, of the shape `schema` describes (and documents): a refusal reports
 * every invalid parameter in the published wording, one entry each (`status must be one of pending, ...`);
 * every parameter is a single value (`limit=5&limit=6` is refused: `limit must be given once`).
 */
export const queryParams = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = decodeProblems(schema)
  const names = new Set(AST.getPropertySignatures(schema.ast).map((property) => property.name))
  return Schema.transformOrFail(RawQuery, Schema.typeSchema(schema), {
    strict: false,
    decode: (input, _, ast) => {
      const repeated = Object.keys(input).filter((name) => names.has(name) && typeof input[name] !== "string")
      const once = Object.fromEntries(Object.entries(input).filter(([name]) => !repeated.includes(name)))
      const twice = repeated.map((name): Problem => ({ path: [name], message: "must be given once" }))
      return Either.match(decode(once), {
        onLeft: (problems) => Either.left(reportedIssue(ast, input, [...twice, ...problems])),
        onRight: (value) =>
          twice.length === 0 ? Either.right(value) : Either.left(reportedIssue(ast, input, twice)),
      })
    },
    encode: (value) => ParseResult.encodeUnknown(schema)(value),
  }).annotations({ [AST.SurrogateAnnotationId]: schema.ast })
}

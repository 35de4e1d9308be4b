import { SchemaAST as AST, Either, identity, ParseResult, Predicate, Schema } from "effect"
import { decodeProblems, MAX_PROBLEMS, type Problem, reportedIssue } from "./problems.js"
import { unstorableTextIn } from "./unstorable-text.js"

const problemId = (problem: Problem) => `${problem.path.map(String).join(".")} ${problem.message}`

/**
 * A JSON request body of the shape `schema` describes (and documents, in the OpenAPI document), decoded so
 * that a refusal reports every invalid field in the published wording, one entry each (at most
 * MAX_PROBLEMS), and a body that is not a JSON object (`[]`, `null`, `"x"`, nothing) as exactly that.
 * `fieldsOf` says what the object's fields are taken to be before anything reads them (all of them, as sent,
 * unless an endpoint's rules say otherwise).
 */
export const jsonBody = <A, I>(
  schema: Schema.Schema<A, I, never>,
  fieldsOf: (body: Readonly<Record<string, unknown>>) => Readonly<Record<string, unknown>> = identity,
) =>
  Schema.declare(
    [schema],
    {
      decode: (shape) => {
        const decode = decodeProblems(shape)
        return (input, _, ast) => {
          if (!Predicate.isRecord(input)) {
            return Either.left(
              reportedIssue(ast, input, [{ path: [], message: "the body must be a JSON object" }]),
            )
          }
          const decoded = decode(fieldsOf(input))
          // Text PostgreSQL cannot store is refused anywhere in the body, in fields the endpoint ignores too;
          // a known field's is already among the schema's problems, and is not said twice.
          const unstorable = unstorableTextIn(input, MAX_PROBLEMS)
          if (unstorable.length === 0)
            return Either.mapLeft(decoded, (problems) => reportedIssue(ast, input, problems))
          const found = Either.isLeft(decoded) ? decoded.left : []
          const said = new Set(found.map(problemId))
          const problems = [...found, ...unstorable.filter((problem) => !said.has(problemId(problem)))]
          return Either.left(reportedIssue(ast, input, problems.slice(0, MAX_PROBLEMS)))
        }
      },
      encode: (shape) => (value, options) => ParseResult.encodeUnknown(shape)(value, options),
    },
    { [AST.SurrogateAnnotationId]: schema.ast },
  )

/**
 * An array of `min` to `max` elements whose length is checked before its elements are: an over-long one is
 * one problem (`items must have at most 100 items`), found without decoding (or reporting on) a single
 * element, so its cost does not grow with the array.
 */
export const boundedArray = <A, I>(
  item: Schema.Schema<A, I, never>,
  bounds: { readonly min: number; readonly max: number; readonly message: string },
) => {
  const length = Schema.Array(Schema.Unknown).pipe(
    Schema.filter((items) => items.length >= bounds.min && items.length <= bounds.max, {
      message: () => bounds.message,
    }),
  )
  const elements = Schema.Array(item)
  const documented = (
    bounds.min > 0 ? elements.pipe(Schema.minItems(bounds.min, { message: () => bounds.message })) : elements
  ).pipe(Schema.maxItems(bounds.max, { message: () => bounds.message }))
  return Schema.declare(
    [item],
    {
      decode: (element) => {
        const elements = ParseResult.decodeUnknownEither(Schema.Array(element))
        return (input, options) =>
          Either.flatMap(ParseResult.decodeUnknownEither(length)(input), () => elements(input, options))
      },
      encode: (element) => ParseResult.encodeUnknown(Schema.Array(element)),
    },
    {
      [AST.SurrogateAnnotationId]: documented.ast,
      arbitrary: (element) => (fc) => fc.array(element(fc), { minLength: bounds.min, maxLength: bounds.max }),
    },
  )
}

import { SchemaAST as AST, Effect, Either, ParseResult, Predicate, Schema } from "effect"

/** One problem found with a request: where (the field's path) and what, as its GH1006 message says it. */
export interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** The most problems one answer reports: beyond them a client has enough to fix, and we stop looking. */
export const MAX_PROBLEMS = 100

// What a value of this type is, for "must be ...": a kind ("a string") or one allowed literal, never a
// schema's internal name. Undefined only ever stands for an absent optional field, which JSON cannot send
// as a value: it is not mentioned.
type Expected = { readonly kind: string } | { readonly literal: AST.LiteralValue }

const expectations = (ast: AST.AST): ReadonlyArray<Expected> => {
  switch (ast._tag) {
    case "Union":
      return ast.types.flatMap(expectations)
    case "Literal":
      return [{ literal: ast.literal }]
    case "StringKeyword":
    case "TemplateLiteral":
      return [{ kind: "a string" }]
    case "NumberKeyword":
      return [{ kind: "a number" }]
    case "BooleanKeyword":
      return [{ kind: "a boolean" }]
    case "TypeLiteral":
      return [{ kind: "an object" }]
    case "TupleType":
      return [{ kind: "an array" }]
    case "Refinement":
      return ast.annotations[AST.SchemaIdAnnotationId] === Schema.IntSchemaId
        ? [{ kind: "an integer" }]
        : expectations(ast.from)
    case "Transformation":
      return expectations(ast.from)
    case "Suspend":
      return expectations(ast.f())
    case "Declaration": {
      const surrogate = AST.getSurrogateAnnotation(ast)
      return surrogate._tag === "Some" ? expectations(surrogate.value) : []
    }
    default:
      return []
  }
}

const inWords = (parts: ReadonlyArray<string>): string =>
  parts.length <= 1 ? (parts[0] ?? "") : `${parts.slice(0, -1).join(", ")} or ${parts[parts.length - 1]}`

/** "must be a string or null", "must be one of pending, processing, ...": what a value of `ast` must be. */
const mustBe = (ast: AST.AST): string => {
  const expected = expectations(ast)
  const kinds = new Set(expected.flatMap((item) => ("kind" in item ? [item.kind] : [])))
  const literals = expected.flatMap((item) => ("literal" in item ? [item.literal] : []))
  const named = literals.filter((literal) => literal !== null).map(String)
  const choice = named.length > 1 ? [`one of ${named.join(", ")}`] : named.map((name) => JSON.stringify(name))
  const parts = [...kinds, ...choice, ...(literals.includes(null) ? ["null"] : [])]
  return parts.length === 0 ? "is invalid" : `must be ${inWords(parts)}`
}

// A message annotation, when it is a plain text (every one of the domain's is).
const annotatedMessage = (ast: AST.AST, issue: ParseResult.ParseIssue): string | undefined => {
  const annotation = AST.getMessageAnnotation(ast)
  if (annotation._tag === "None") return undefined
  const message = annotation.value(issue)
  if (Predicate.isString(message)) return message
  return !Effect.isEffect(message) && Predicate.isString(message.message) ? message.message : undefined
}

const issuesOf = (issue: ParseResult.Composite): ReadonlyArray<ParseResult.ParseIssue> =>
  Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]

// A value of the wrong type altogether (a number where a string goes), as opposed to a value of the right
// type that breaks a rule of the field (a string too long): a union reports the rule a member's type matched.
const isTypeMismatch = (issue: ParseResult.ParseIssue): boolean => {
  switch (issue._tag) {
    case "Type":
      return !AST.isRefinement(issue.ast) && !AST.isTransformation(issue.ast)
    case "Refinement":
      return issue.kind === "From" && isTypeMismatch(issue.issue)
    case "Transformation":
      return issue.kind === "Encoded" && isTypeMismatch(issue.issue)
    case "Composite":
      return AST.isUnion(issue.ast) && issuesOf(issue).every(isTypeMismatch)
    default:
      return false
  }
}

/**
 * The problems a failed decoding found, one per invalid field, in the published wording (`must be a string`,
 * `is required`, the domain's own rule messages), at most MAX_PROBLEMS of them. It never formats the value
 * that was sent: a message cannot leak it, and a deeply nested one cannot exhaust the stack.
 */
export const problemsOf = (issue: ParseResult.ParseIssue): ReadonlyArray<Problem> => {
  const unique = new Map<string, Problem>()
  for (const problem of problemsIn(issue, [])) {
    if (unique.size === MAX_PROBLEMS) break
    unique.set(`${problem.path.map(String).join(".")} ${problem.message}`, problem)
  }
  return [...unique.values()]
}

// A rule's message when its annotation has none: the text its check failed with, or its description.
const ruleOf = (ast: AST.AST, inner?: ParseResult.ParseIssue): string => {
  if (inner?._tag === "Type" && inner.message !== undefined) return inner.message
  const description = AST.getDescriptionAnnotation(ast)
  return description._tag === "Some" ? `must be ${description.value}` : "is invalid"
}

// The issue tree is as deep as the schema (never as the value sent) and as wide as its bounded arrays.
function* problemsIn(issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): Generator<Problem> {
  switch (issue._tag) {
    case "Pointer":
      yield* problemsIn(issue.issue, path.concat(issue.path))
      return
    case "Missing":
      yield { path, message: "is required" }
      return
    case "Unexpected":
      yield { path, message: "is not allowed" }
      return
    case "Forbidden":
      yield { path, message: "is invalid" }
      return
    case "Type": {
      const fallback = AST.isRefinement(issue.ast) ? ruleOf(issue.ast) : mustBe(issue.ast)
      yield { path, message: annotatedMessage(issue.ast, issue) ?? issue.message ?? fallback }
      return
    }
    case "Refinement":
      if (issue.kind === "From") yield* problemsIn(issue.issue, path)
      else yield { path, message: annotatedMessage(issue.ast, issue) ?? ruleOf(issue.ast, issue.issue) }
      return
    case "Transformation":
      if (issue.kind !== "Transformation") yield* problemsIn(issue.issue, path)
      else yield { path, message: annotatedMessage(issue.ast, issue) ?? ruleOf(issue.ast, issue.issue) }
      return
    case "Composite": {
      const members = issuesOf(issue)
      if (!AST.isUnion(issue.ast)) {
        for (const member of members) yield* problemsIn(member, path)
        return
      }
      // One entry for the field, not one per member: the rule of the member whose type the value has, or
      // else what the value must be.
      const matched = members.find((member) => !isTypeMismatch(member))
      if (matched === undefined) yield { path, message: mustBe(issue.ast) }
      else yield* problemsIn(matched, path)
      return
    }
  }
}

// Every problem of a request, not only the first (DESIGN.md section 5); unknown fields are ignored.
const allErrors: AST.ParseOptions = { errors: "all", onExcessProperty: "ignore" }

/**
 * The issue a request schema fails with: one issue per problem, its message already written, so that the
 * platform's formatting of it (HttpApiDecodeError) neither looks at the value sent nor grows with it.
 */
export const reportedIssue = (
  ast: AST.AST,
  actual: unknown,
  problems: ReadonlyArray<Problem>,
): ParseResult.ParseIssue => {
  const issues = problems.slice(0, MAX_PROBLEMS).map(({ path, message }): ParseResult.ParseIssue => {
    const issue = new ParseResult.Type(ast, undefined, message)
    const [first, ...rest] = path
    return first === undefined ? issue : new ParseResult.Pointer([first, ...rest], undefined, issue)
  })
  const [first, ...rest] = issues
  return first === undefined
    ? new ParseResult.Type(ast, undefined, "is invalid")
    : new ParseResult.Composite(ast, actual, [first, ...rest])
}

/** Decodes a request's part with `schema`, failing with every problem found (at most MAX_PROBLEMS). */
export const decodeProblems =
  <A, I>(schema: Schema.Schema<A, I, never>) =>
  (input: unknown): Either.Either<A, ReadonlyArray<Problem>> =>
    Either.mapLeft(ParseResult.decodeUnknownEither(schema)(input, allErrors), problemsOf)

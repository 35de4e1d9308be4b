import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { InvalidParams, PointsAccountConflict } from "@points/domain"
import { ApiError, MAX_PROBLEMS } from "@points/http-api"
import { entryOf } from "./api-error-of.js"

// The contract's request schemas (jsonBody, queryParams) report their problems in the published wording
// already. A schema that does not go through them (the token endpoints' forms) still reports in Effect's:
// "Expected string, actual 5" becomes "must be a string".
const problemOf = (message: string, atRoot: boolean): string => {
  const expected = /^Expected (.+?), actual /s.exec(message)?.[1]
  if (expected !== undefined) {
    // Only the body as a whole can be at the root: a query or a path is always an object.
    if (atRoot) return "the body must be a JSON object"
    if (expected === "string" || expected === "number" || expected === "boolean")
      return `must be a ${expected}`
    if (expected.startsWith("{") || expected.startsWith("Struct")) return "must be an object"
    if (expected.startsWith("ReadonlyArray") || expected.startsWith("Array")) return "must be an array"
    return `must be ${expected}`
  }
  if (message === "is missing") return "is required"
  if (message.startsWith("is unexpected")) return "is not allowed"
  return message
}

const fieldOf = (path: ReadonlyArray<PropertyKey>) => path.map(String).join(".")

// An optional field is a union with `undefined`: a bad value fails both members, and the `undefined` member's
// "Expected undefined" says nothing to the client ("limit must be undefined"). It is dropped when the field
// has another issue, which names the real problem.
const withoutUndefinedMember = <
  I extends { readonly path: ReadonlyArray<PropertyKey>; readonly message: string },
>(
  issues: ReadonlyArray<I>,
): ReadonlyArray<I> =>
  issues.filter(
    (issue) =>
      !issue.message.startsWith("Expected undefined, actual ") ||
      !issues.some((other) => other !== issue && fieldOf(other.path) === fieldOf(issue.path)),
  )

// As published, `transaction.user_id` that is not a string (or is missing) is LE1001 (the domain's
// PointsAccountConflict for that reason); any other problem with it (a NUL character) is GH1006 like every
// other field's.
const codeOf = (params: InvalidParams) =>
  params.field === "transaction.user_id" &&
  (params.problem === "must be a string" || params.problem === "is required")
    ? new PointsAccountConflict({ reason: "UserIdNotAString" }).code
    : params.code

/**
 * The answer to a request that failed its schema: 400 with one entry per problem found (at most
 * MAX_PROBLEMS), GH1006 (LE1001 for a `transaction.user_id` that is not a string, as published), messages
 * such as `email must be a string` that name the field.
 */
export const invalidParamsOf = (error: HttpApiDecodeError): ApiError => {
  const issues = withoutUndefinedMember(error.issues).slice(0, MAX_PROBLEMS)
  const seen = new Set<string>()
  const entries = issues.flatMap((issue) => {
    const field = fieldOf(issue.path)
    const problem = problemOf(issue.message, field === "")
    // The field's own wording ("is required" for a missing user_id too), under its error's code.
    const params = new InvalidParams({ field, problem })
    if (seen.has(params.message)) return []
    seen.add(params.message)
    return [entryOf(codeOf(params), params.message)]
  })
  const [first, ...rest] = entries
  return new ApiError({
    status: 400,
    errors: first === undefined ? [entryOf("GH1006", "invalid params")] : [first, ...rest],
  })
}

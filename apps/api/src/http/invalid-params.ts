import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { ApiError } from "@points/http-api"
import { entryOf } from "./api-error-of.js"

// Schema messages read "Expected string, actual 5"; the published ones read "email must be a string".
const problemOf = (message: string): string => {
  const expected = /^Expected (.+?), actual /.exec(message)?.[1]
  if (expected !== undefined) {
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

/**
 * The answer to a request that failed its schema: 400 with one entry per invalid field (GH1006, or LE1001
 * for `transaction.user_id`, as published), messages such as `email must be a string`.
 */
export const invalidParamsOf = (error: HttpApiDecodeError): ApiError => {
  const issues =
    error.issues.length > 0 ? withoutUndefinedMember(error.issues) : [{ path: [], message: "invalid params" }]
  const seen = new Set<string>()
  const entries = issues.flatMap((issue) => {
    const field = fieldOf(issue.path)
    const problem = problemOf(issue.message)
    const text = field === "" ? `invalid params: ${problem}` : `${field} ${problem}`
    if (seen.has(text)) return []
    seen.add(text)
    return [entryOf(field === "transaction.user_id" ? "LE1001" : "GH1006", text)]
  })
  const [first, ...rest] = entries
  return new ApiError({
    status: 400,
    errors: first === undefined ? [entryOf("GH1006", "invalid params")] : [first, ...rest],
  })
}

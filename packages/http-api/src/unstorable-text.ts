import { unstorableTextProblem } from "@points/domain"
import type { Problem } from "./problems.js"

// A value of the body still to look at, with where it is: its parent and its key there (undefined at the
// root), so that a path is built only for a problem found, never for every value.
interface Visit {
  readonly value: unknown
  readonly parent: Visit | undefined
  readonly key: PropertyKey | undefined
}

/** The most keys of a path a problem names: the field from the top, not the whole of a deep nesting. */
export const MAX_PATH_KEYS = 16

const pathOf = (visit: Visit | undefined): Array<PropertyKey> => {
  const reversed: Array<PropertyKey> = []
  for (let at = visit; at?.key !== undefined; at = at.parent) reversed.push(at.key)
  return reversed.reverse().slice(0, MAX_PATH_KEYS)
}

// A field name is not a field, so its problem is its object's: "extra must not have a field name that
// contains NUL characters" (the name itself is not repeated: it is what cannot be shown).
const nulProblem = unstorableTextProblem("\u0000")
const fieldNameProblem = (problem: string, atRoot: boolean) =>
  `${atRoot ? "the body " : ""}must not have a field name that ${
    problem === nulProblem ? "contains NUL characters" : "is not valid Unicode text"
  }`

/**
 * Every text of a JSON body that PostgreSQL could not store, in string values and field names alike, known
 * fields or not (DESIGN.md section 2: no NUL characters anywhere): at most `max` problems, in the order of
 * the body, each named by at most MAX_PATH_KEYS keys from the top. Walked with a stack of its own, so a
 * deeply nested body costs no call stack.
 */
export const unstorableTextIn = (body: unknown, max: number): Array<Problem> => {
  const problems: Array<Problem> = []
  const stack: Array<Visit> = [{ value: body, parent: undefined, key: undefined }]
  while (stack.length > 0 && problems.length < max) {
    const visit = stack.pop() as Visit
    const { value } = visit
    if (typeof value === "string") {
      const problem = unstorableTextProblem(value)
      if (problem !== null) problems.push({ path: pathOf(visit), message: problem })
    } else if (Array.isArray(value)) {
      for (let n = value.length - 1; n >= 0; n--) stack.push({ value: value[n], parent: visit, key: n })
    } else if (value !== null && typeof value === "object") {
      // The object's field-name problems come before anything inside it; its fields are visited in order.
      const fields: Array<Visit> = []
      for (const [name, child] of Object.entries(value)) {
        const problem = unstorableTextProblem(name)
        if (problem === null) fields.push({ value: child, parent: visit, key: name })
        else
          problems.push({ path: pathOf(visit), message: fieldNameProblem(problem, visit.key === undefined) })
      }
      for (let n = fields.length - 1; n >= 0; n--) stack.push(fields[n] as Visit)
    }
  }
  return problems.slice(0, max)
}

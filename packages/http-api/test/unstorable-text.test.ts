import { describe, expect, it } from "@effect/vitest"
import { MAX_PATH_KEYS, MAX_PROBLEMS, unstorableTextIn } from "../src/index.js"

const nul = "\u0000"

describe("unstorableTextIn", () => {
  it("finds NULs and lone surrogates in values and field names, known or not, in the order of the body", () => {
    const body = { a: "fine", b: [`x${nul}`, { [`k${nul}`]: 1, c: "\ud800" }], "\udc00": 2 }
    expect(unstorableTextIn(body, MAX_PROBLEMS)).toEqual([
      { path: [], message: "the body must not have a field name that is not valid Unicode text" },
      { path: ["b", 0], message: "must not contain NUL characters" },
      { path: ["b", 1], message: "must not have a field name that contains NUL characters" },
      { path: ["b", 1, "c"], message: "must be valid Unicode text" },
    ])
    expect(unstorableTextIn({ a: "\ud83d\ude00 paired", b: [1, true, null] }, MAX_PROBLEMS)).toEqual([])
  })

  it("walks a body nested 200,000 deep without the call stack, naming the field from the top", () => {
    let body: unknown = nul
    for (let n = 0; n < 200_000; n++) body = [body]
    const problems = unstorableTextIn({ deep: body }, MAX_PROBLEMS)
    expect(problems).toHaveLength(1)
    expect(problems[0]?.path).toEqual(["deep", ...Array.from({ length: MAX_PATH_KEYS - 1 }, () => 0)])
  })

  it("stops at the most problems asked for", () => {
    const body = { many: Array.from({ length: 5_000 }, () => nul) }
    const problems = unstorableTextIn(body, 7)
    expect(problems.map((problem) => problem.path)).toEqual(Array.from({ length: 7 }, (_, n) => ["many", n]))
  })
})

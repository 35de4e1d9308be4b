import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"

const read = (file: string) => readFileSync(new URL(file, import.meta.url), "utf8")

const region = /\/\/ #region (\S+)\n([\s\S]*?)\/\/ #endregion \1\n/g

// A region inside a test's body, as the README shows it: its common indentation removed.
const dedented = (code: string) => {
  const lines = code.split("\n")
  const indents = lines.filter((line) => line.trim() !== "").map((line) => /^ */.exec(line)?.[0].length ?? 0)
  const common = Math.min(...indents)
  return lines.map((line) => line.slice(common)).join("\n")
}

describe("README.md", () => {
  it("shows the examples that readme-example.test.ts runs, verbatim, the three of its example in order", () => {
    const regions = Array.from(read("./readme-example.test.ts").matchAll(region), ([, name, code]) => ({
      name,
      code: dedented(code ?? ""),
    }))
    expect(regions.map(({ name }) => name)).toEqual(["example", "first-add", "place-order", "workflow"])
    const readme = read("../README.md")
    const blocks = regions.map(({ code }) => `\`\`\`ts\n${code}\`\`\``)
    for (const [index, block] of blocks.entries()) expect(readme, regions[index]?.name).toContain(block)
    // The workflow's block comes earlier, in the README's section on workflows.
    const places = blocks.slice(0, 3).map((block) => readme.indexOf(block))
    expect(places).toEqual([...places].sort((a, b) => a - b))
  })
})

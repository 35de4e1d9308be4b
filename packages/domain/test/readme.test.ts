import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"

const read = (file: string) => readFileSync(new URL(file, import.meta.url), "utf8")

const region = /\/\/ #region (\S+)\n([\s\S]*?)\/\/ #endregion \1\n/g

describe("README.md", () => {
  it("shows the examples that readme-example.test.ts runs, verbatim and in order", () => {
    const regions = Array.from(read("./readme-example.test.ts").matchAll(region), ([, name, code]) => ({
      name,
      code,
    }))
    expect(regions.map(({ name }) => name)).toEqual(["example", "first-add", "place-order"])
    const readme = read("../README.md")
    const blocks = regions.map(({ code }) => `\`\`\`ts\n${code}\`\`\``)
    for (const [index, block] of blocks.entries()) expect(readme, regions[index]?.name).toContain(block)
    const places = blocks.map((block) => readme.indexOf(block))
    expect(places).toEqual([...places].sort((a, b) => a - b))
  })
})

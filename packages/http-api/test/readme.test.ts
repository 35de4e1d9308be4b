import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"

const read = (file: string) => readFileSync(new URL(file, import.meta.url), "utf8")

const region = /\/\/ #region (\S+)\n([\s\S]*?)\/\/ #endregion \1\n/g

describe("README.md", () => {
  it("shows the example that readme-example.ts holds, verbatim", () => {
    const regions = Array.from(read("./readme-example.ts").matchAll(region), ([, name, code]) => ({
      name,
      code,
    }))
    expect(regions.map(({ name }) => name)).toEqual(["contract"])
    const readme = read("../README.md")
    for (const { name, code } of regions) expect(readme, name).toContain(`\`\`\`ts\n${code}\`\`\``)
  })
})

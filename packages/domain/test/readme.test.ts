import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"

const read = (file: string) => readFileSync(new URL(file, import.meta.url), "utf8")

describe("README.md", () => {
  it("shows the example that readme-example.test.ts runs, verbatim", () => {
    const source = read("./readme-example.test.ts")
    const region = source.match(/\/\/ #region example\n([\s\S]*?)\/\/ #endregion example/)?.[1]
    expect(region).toBeDefined()
    expect(read("../README.md")).toContain(`\`\`\`ts\n${region}\`\`\``)
  })
})

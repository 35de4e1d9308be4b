import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"

const packageRoot = fileURLToPath(new URL("../..", import.meta.url))

// What vitest does after a failed run: it sets the exit code and lets the process end by itself.
const failedRun = `
  import setup from "./src/testing/global-setup.ts"
  const teardown = await setup()
  process.exitCode = 1
  await teardown()
`

const exitCodeOf = (env: NodeJS.ProcessEnv) =>
  Effect.async<number | null>((resume) => {
    const child = spawn(
      process.execPath,
      ["--conditions=@points/source", "--import", "tsx", "--input-type=module", "-e", failedRun],
      { cwd: packageRoot, env, stdio: "ignore" },
    )
    child.once("exit", (code) => resume(Effect.succeed(code)))
  })

describe("The tests' global setup", () => {
  it.effect(
    "keeps a failed run's exit code with the embedded server (its exit hook ended every run with 0)",
    () =>
      Effect.gen(function* () {
        const { DATABASE_URL: _, ...withoutDatabase } = process.env
        expect(yield* exitCodeOf(withoutDatabase)).toBe(1)
      }),
    60_000,
  )
})

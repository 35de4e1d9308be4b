import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Exit } from "effect"
import { ExitCode } from "./command-failure.js"
import { adminProgram } from "./program.js"
import { outputFailureText, watchOutput, whenWritten } from "./stdout-failure.js"

const outputFailure = watchOutput(process.stdout)

// The exit code is passed to process.exit by runMain: setting process.exitCode is not enough, because the
// embedded server's exit hook ends the process with code 0 on `beforeExit`.
NodeRuntime.runMain(adminProgram(process.argv), {
  disablePrettyLogger: true,
  teardown: (exit, onExit) => {
    const code = Exit.match(exit, {
      onSuccess: (code) => (typeof code === "number" ? code : ExitCode.failed),
      onFailure: (cause) => (Cause.isInterruptedOnly(cause) ? ExitCode.interrupted : ExitCode.failed),
    })
    // Output that could not be written is reported after the write: the exit waits until it is known.
    whenWritten(process.stdout, () => {
      const failure = outputFailure()
      if (failure === undefined) return onExit(code)
      process.stderr.write(`${outputFailureText(failure, process.argv.includes("--json"))}\n`)
      onExit(code === 0 ? ExitCode.failed : code)
    })
  },
})

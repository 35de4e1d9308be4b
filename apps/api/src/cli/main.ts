import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Exit } from "effect"
import { ExitCode } from "./command-failure.js"
import { adminProgram } from "./program.js"
import { stdoutFailureText, watchStdout } from "./stdout-failure.js"

const stdoutFailure = watchStdout()

// The exit code is passed to process.exit by runMain: setting process.exitCode is not enough, because the
// embedded server's exit hook ends the process with code 0 on `beforeExit`.
NodeRuntime.runMain(adminProgram(process.argv), {
  disablePrettyLogger: true,
  teardown: (exit, onExit) => {
    const code = Exit.match(exit, {
      onSuccess: (code) => (typeof code === "number" ? code : ExitCode.failed),
      onFailure: (cause) => (Cause.isInterruptedOnly(cause) ? ExitCode.interrupted : ExitCode.failed),
    })
    // A failed write to stdout is reported on a later tick than the write: the exit waits for it.
    setImmediate(() => {
      const failure = stdoutFailure()
      if (failure === undefined) return onExit(code)
      process.stderr.write(`${stdoutFailureText(failure, process.argv.includes("--json"))}\n`)
      onExit(code === 0 ? ExitCode.failed : code)
    })
  },
})

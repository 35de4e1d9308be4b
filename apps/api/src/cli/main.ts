import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Exit } from "effect"
import { ExitCode } from "./command-failure.js"
import { adminProgram } from "./program.js"

// The exit code is passed to process.exit by runMain: setting process.exitCode is not enough, because the
// embedded server's exit hook ends the process with code 0 on `beforeExit`.
NodeRuntime.runMain(adminProgram(process.argv), {
  disablePrettyLogger: true,
  teardown: (exit, onExit) =>
    onExit(
      Exit.match(exit, {
        onSuccess: (code) => (typeof code === "number" ? code : ExitCode.failed),
        onFailure: (cause) => (Cause.isInterruptedOnly(cause) ? ExitCode.interrupted : ExitCode.failed),
      }),
    ),
})

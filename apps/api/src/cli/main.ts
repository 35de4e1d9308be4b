import { ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Logger, LogLevel } from "effect"
import { runAdminCli } from "./admin-command.js"
import { CommandFailed, ExitCode } from "./command-failure.js"

// stdout carries only the command's output (parseable with --json); the few logs worth seeing go to stderr.
const StderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

// A failure already printed (a refused command, a wrong command line) becomes the exit code; anything else
// is a defect, which runMain reports in full.
const program = runAdminCli(process.argv).pipe(
  Effect.as(0),
  Effect.catchIf(
    (error) => error instanceof CommandFailed || ValidationError.isValidationError(error),
    (error) => Effect.succeed(error instanceof CommandFailed ? error.exitCode : ExitCode.usage),
  ),
  Effect.provide(NodeContext.layer),
  Effect.provide(StderrLogger),
  Logger.withMinimumLogLevel(LogLevel.Warning),
)

// The exit code is passed to process.exit by runMain: setting process.exitCode is not enough, because the
// embedded server's exit hook ends the process with code 0 on `beforeExit`.
NodeRuntime.runMain(program, {
  disablePrettyLogger: true,
  teardown: (exit, onExit) =>
    onExit(
      Exit.match(exit, {
        onSuccess: (code) => (typeof code === "number" ? code : ExitCode.failed),
        onFailure: (cause) => (Cause.isInterruptedOnly(cause) ? ExitCode.interrupted : ExitCode.failed),
      }),
    ),
})

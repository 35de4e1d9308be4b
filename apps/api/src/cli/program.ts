import { ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Logger, LogLevel } from "effect"
import { runAdminCli } from "./admin-command.js"
import { CommandFailed, ExitCode } from "./command-failure.js"

// stdout carries only the command's output (parseable with --json); the few logs worth seeing go to stderr.
const StderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

/**
 * The admin CLI run on a command line (`argv` as Node gives it: node, the script, then the arguments), to the
 * exit code it ends with. A failure already printed (a refused command, a wrong command line) becomes its
 * exit code; anything else is a defect, left to the caller (runMain reports it in full).
 */
export const adminProgram = (argv: ReadonlyArray<string>) =>
  runAdminCli(argv).pipe(
    Effect.as(0),
    Effect.catchIf(
      (error) => error instanceof CommandFailed || ValidationError.isValidationError(error),
      (error) => Effect.succeed(error instanceof CommandFailed ? error.exitCode : ExitCode.usage),
    ),
    Effect.provide(NodeContext.layer),
    Effect.provide(StderrLogger),
    Logger.withMinimumLogLevel(LogLevel.Warning),
  )

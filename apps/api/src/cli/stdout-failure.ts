import { failureText } from "./command-failure.js"

/**
 * Watches this process's stdout for a write that failed (a full disk, a pipe whose reader went away): Node
 * reports it after the write returned, as an 'error' event that would end the process with a stack trace,
 * after the command had done its work. Returns what reads the first such failure, if any.
 */
export const watchStdout = (): (() => NodeJS.ErrnoException | undefined) => {
  let failure: NodeJS.ErrnoException | undefined
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    failure ??= error
  })
  return () => failure
}

/**
 * Why the command's output is missing, as the CLI prints failures: what the command did is done, so a client
 * secret it issued was never shown, and rotating the credential issues another.
 */
export const stdoutFailureText = (failure: NodeJS.ErrnoException, json: boolean) =>
  failureText(
    { json },
    {
      code: "OUTPUT_FAILED",
      message: `stdout could not be written (${failure.code ?? failure.message}): what the command did is done; a client secret it issued (credentials create or rotate) was not shown and cannot be, so rotate that credential for a new one`,
    },
  )

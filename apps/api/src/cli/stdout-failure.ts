import type { Writable } from "node:stream"
import { failureText } from "./command-failure.js"

/**
 * Watches a stream (this process's stdout) for a write that failed (a full disk, a pipe whose reader went
 * away): Node reports it after the write returned, as an 'error' event that would end the process with a
 * stack trace, after the command had done its work. Returns what reads the first such failure, if any.
 */
export const watchOutput = (stream: Writable): (() => NodeJS.ErrnoException | undefined) => {
  let failure: NodeJS.ErrnoException | undefined
  stream.on("error", (error: NodeJS.ErrnoException) => {
    failure ??= error
  })
  return () => failure
}

/**
 * Calls `then` once everything written to the stream has been written or refused: output still queued (a
 * pipe whose reader is slow takes writes asynchronously past 64 KiB) fails, if it does, only later, and the
 * process must not exit before it is known.
 */
export const whenWritten = (stream: Writable, then: () => void) => {
  let called = false
  const settle = () => {
    if (called) return
    called = true
    stream.off("drain", settle).off("error", settle).off("close", settle)
    // A failure is reported on a tick after the write's own callback.
    setImmediate(then)
  }
  if (stream.writableLength === 0 || stream.destroyed) return settle()
  stream.once("drain", settle).once("error", settle).once("close", settle)
}

let secretShown = false

/** Marks that the command prints a client secret: if its output fails, the secret is lost (see outputFailureText). */
export const showingSecret = () => {
  secretShown = true
}

/**
 * Why the command's output is missing, as the CLI prints failures: what the command did is done, and a
 * client secret it issued was never shown, which rotating the credential replaces.
 */
export const outputFailureText = (failure: NodeJS.ErrnoException, json: boolean) =>
  failureText(
    { json },
    {
      code: "OUTPUT_FAILED",
      message: `stdout could not be written (${failure.code ?? failure.message}): what the command did is done${
        secretShown
          ? "; the client secret it issued was not shown and cannot be, so rotate that credential for a new one"
          : ""
      }`,
    },
  )

/**
 * How long a stop may take from SIGTERM or SIGINT (a service must be gone within 10 s): past it, the process
 * exits with what is still in flight undone. That loses and duplicates nothing: a transaction not yet
 * committed rolls back when its connection closes, and a client that got no answer retries with its key.
 * It happens when the database stalls (a lock held, a server frozen): the drain gives requests 7 s, but a
 * write waiting on the database would otherwise keep the process up until the database answers.
 */
export const STOP_DEADLINE_MILLIS = 9_000

const lastSteps = new Set<() => void>()

/**
 * Registers what must still happen when the process exits at the deadline (an embedded server stopped, so
 * that it does not outlive the process): synchronous and quick. Returns its removal, for a normal stop.
 */
export const beforeForcedExit = (step: () => void): (() => void) => {
  lastSteps.add(step)
  return () => {
    lastSteps.delete(step)
  }
}

// One JSON line, as the service's logger writes them: the logger's fibers may be the ones that hang.
const logForcedExit = (service: string, millis: number) =>
  process.stdout.write(
    `${JSON.stringify({
      message: `${service} did not stop within ${millis} ms (the database is slow or unreachable): exiting with work in flight, whose transactions roll back`,
      logLevel: "ERROR",
      timestamp: new Date().toISOString(),
    })}\n`,
  )

/**
 * Starts the deadline of a stop beginning now (a fault stops the service without a signal): an unreferenced
 * timer, so a stop that ends in time ends the process as usual. At the deadline: one log line, the registered
 * last steps, exit code 1.
 */
export const startStopDeadline = (service: string, millis: number = STOP_DEADLINE_MILLIS) => {
  setTimeout(() => {
    logForcedExit(service, millis)
    for (const step of lastSteps) {
      try {
        step()
      } catch {
        // The exit must happen whatever a step does.
      }
    }
    process.exit(1)
  }, millis).unref()
}

/** Starts the deadline (startStopDeadline) once SIGTERM or SIGINT arrives. */
export const armStopDeadline = (service: string, millis: number = STOP_DEADLINE_MILLIS) => {
  const arm = () => startStopDeadline(service, millis)
  process.once("SIGTERM", arm)
  process.once("SIGINT", arm)
}

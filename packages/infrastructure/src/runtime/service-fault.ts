import { Context, Data, type Deferred } from "effect"

/** A fault a running service cannot recover from by itself (its embedded database ended): the process ends. */
export class ServiceFault extends Data.TaggedError("ServiceFault")<{ readonly message: string }> {}

/**
 * Where the parts of a running service report a ServiceFault: the service program (serviceProgram) ends on
 * the first, stopping as at SIGTERM and exiting 1, so that a supervisor restarts it. Optional: a part built
 * without it (a test, the admin CLI) reports nothing.
 */
export class ServiceFaults extends Context.Tag("@points/infrastructure/ServiceFaults")<
  ServiceFaults,
  Deferred.Deferred<never, ServiceFault>
>() {}

import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import {
  Cause,
  Config,
  ConfigError,
  ConfigProvider,
  Deferred,
  Effect,
  Either,
  Layer,
  Logger,
  Option,
} from "effect"
import { databaseConfig } from "../database/database-config.js"
import { logLevelSetting } from "./log-level.js"
import { ServiceFault, ServiceFaults } from "./service-fault.js"
import { startProblemOf } from "./start-failure.js"
import { armStopDeadline, startStopDeadline } from "./stop-deadline.js"

/** A long-running process: what it is called in its logs, the settings it reads, and what it runs. */
export interface ServiceDefinition<E> {
  /** How the logs name it ("the API", "the projections"). */
  readonly name: string
  /** Every setting the service reads, checked before anything starts, so one line lists every bad value. */
  readonly settings: Config.Config<unknown>
  /** Connections of the pool its consumers hold for their locks while it runs (one per consumer). */
  readonly lockConnections: number
  /** The service itself: built at start, released in reverse order at stop. */
  readonly layer: Layer.Layer<never, E>
}

const isServiceFault = (error: unknown): error is ServiceFault => error instanceof ServiceFault

// A pool no larger than its consumers' locks would leave no connection for anything else: every request
// would wait for one until it timed out.
const poolLeavingRoom = (lockConnections: number) =>
  databaseConfig.pipe(
    Config.mapOrFail((config) =>
      config.poolSize > lockConnections
        ? Either.right(config)
        : Either.left(
            ConfigError.InvalidData(
              ["DATABASE_POOL_SIZE"],
              `must be more than ${lockConnections} here: this process's consumers hold ${lockConnections} of its connections for their locks`,
            ),
          ),
    ),
  )

/**
 * The environment as settings, a variable set to nothing counting as unset (as env files write them), so
 * that `ADMIN_TOKEN=` leaves the admin API off instead of refusing an empty token.
 */
export const environmentSettings = (): ConfigProvider.ConfigProvider =>
  ConfigProvider.fromMap(
    new Map(
      Object.entries(process.env).filter((entry): entry is [string, string] => (entry[1] ?? "") !== ""),
    ),
    { pathDelim: "_", seqDelim: "," },
  )

/**
 * The program of a service process: settings checked first, then the layer built and kept until SIGTERM or
 * SIGINT interrupt it, or a part reports a ServiceFault, which fails it (servers stop accepting and finish
 * in-flight work, consumers stop, the pool and the embedded database close, as layers release in reverse);
 * JSON log lines throughout, at LOG_LEVEL.
 */
export const serviceProgram = <E>(
  service: ServiceDefinition<E>,
  /** Runs when a fault stops the service, before its stop begins (runService starts the stop's deadline). */
  onFault: () => void = () => {},
) =>
  Effect.gen(function* () {
    // The database's settings too (every service has one), so that one line lists every bad value.
    const [level] = yield* Config.all([
      logLevelSetting,
      poolLeavingRoom(service.lockConnections),
      service.settings,
    ])
    // Runs until SIGTERM or SIGINT, or until a part reports a fault it cannot recover from (ServiceFaults):
    // then it stops as at SIGTERM and fails, so that the process exits 1.
    const faults = yield* Deferred.make<never, ServiceFault>()
    return yield* Effect.scoped(
      Effect.zipRight(
        Layer.build(service.layer),
        Deferred.await(faults).pipe(
          Effect.tapError((fault) =>
            Effect.zipRight(Effect.sync(onFault), Effect.logError(`${service.name} stops: ${fault.message}`)),
          ),
          Effect.onInterrupt(() =>
            Effect.logInfo("stopping: accepting nothing new, finishing in-flight work"),
          ),
        ),
      ),
    ).pipe(
      Effect.onInterrupt(() => Effect.logInfo("stopped")),
      Effect.provideService(ServiceFaults, faults),
      Logger.withMinimumLogLevel(level),
    )
  }).pipe(
    // A failure to start is one JSON line: what to fix when an operator can (a setting, the database, the
    // address), without a stack; anything else with its cause.
    Effect.tapErrorCause((cause) => {
      // A fault of the running service is logged where it stopped it, not as a failure to start.
      if (Cause.isInterruptedOnly(cause) || Cause.failureOption(cause).pipe(Option.exists(isServiceFault)))
        return Effect.void
      const problem = startProblemOf(cause)
      return problem === undefined
        ? Effect.logError(`${service.name} could not start`, cause)
        : Effect.logError(`${service.name} could not start: ${problem}`)
    }),
    // Provided around everything, layers included: a logger provided to a layer with Layer.provide does not
    // reach the fibers that layer's dependents start, and nothing would print.
    Effect.provide(Logger.json),
  )

/**
 * Runs a service as the process's main program (see serviceProgram); the exit code follows its end, or is 1
 * when a stop (after a signal or a fault) outlasts STOP_DEADLINE_MILLIS (see armStopDeadline).
 */
export const runService = <E>(service: ServiceDefinition<E>): void => {
  armStopDeadline(service.name)
  // A fault's stop is bounded as a signal's is.
  NodeRuntime.runMain(
    serviceProgram(service, () => startStopDeadline(service.name)).pipe(
      Effect.withConfigProvider(environmentSettings()),
    ),
    {
      disablePrettyLogger: true,
      disableErrorReporting: true,
    },
  )
}

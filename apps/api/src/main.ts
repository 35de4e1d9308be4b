import { readFileSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import { HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { DatabaseLive } from "@points/infrastructure"
import { Cause, Config, ConfigError, Effect, Either, Layer, Logger, LogLevel, Option } from "effect"
import { apiSettings, Settings } from "./config.js"
import { HttpAppLive, UserActivationLive, WriteSideLive } from "./server.js"

// LOG_LEVEL, validated like every setting: a misspelt level fails start instead of silently logging at INFO.
const logLevel = Config.string("LOG_LEVEL").pipe(
  Config.withDefault("INFO"),
  Config.mapOrFail((label) => {
    const level = LogLevel.allLevels.find((candidate) => candidate.label === label.toUpperCase())
    return level === undefined
      ? Either.left(
          ConfigError.InvalidData(
            ["LOG_LEVEL"],
            `LOG_LEVEL must be one of ${LogLevel.allLevels.map((candidate) => candidate.label).join(", ")}`,
          ),
        )
      : Either.right(level)
  }),
)

/** The HTTP(S) server on PORT/HOST: HTTPS when TLS_CERT_FILE and TLS_KEY_FILE are set. */
const ServerLive = Layer.unwrapEffect(
  Effect.map(Settings, (settings) => {
    const tls = Option.zipWith(settings.tlsCertFile, settings.tlsKeyFile, (cert, key) => ({
      cert: readFileSync(cert),
      key: readFileSync(key),
    }))
    const create = Option.match(tls, {
      onNone: () => () => createHttpServer(),
      onSome: (options) => () => createHttpsServer(options),
    })
    const scheme = Option.isSome(tls) ? "https" : "http"
    // One line saying where it listens: operators (and the process tests) wait for it.
    const listening = Layer.effectDiscard(
      Effect.flatMap(HttpServer.HttpServer, (server) =>
        server.address._tag === "TcpAddress"
          ? Effect.logInfo(`listening on ${scheme}://${server.address.hostname}:${server.address.port}`)
          : Effect.logInfo(`listening on ${server.address.path}`),
      ),
    )
    return Layer.provideMerge(
      listening,
      NodeHttpServer.layer(create, { port: settings.port, host: settings.host }),
    )
  }),
)

const MainLive = Layer.mergeAll(HttpAppLive, UserActivationLive).pipe(
  Layer.provide(ServerLive),
  Layer.provide(WriteSideLive),
  Layer.provide(Settings.layer),
  Layer.provide(DatabaseLive),
)

// SIGTERM/SIGINT interrupt the main fiber: the server stops accepting, in-flight requests finish, the
// consumers stop, the pool and the embedded database close, in that order (layers release in reverse).
const program = Effect.gen(function* () {
  // Every setting is read here first, before the database starts: one line lists every bad value.
  const [level] = yield* Config.all([logLevel, apiSettings])
  return yield* Effect.scoped(
    Effect.zipRight(
      Layer.build(MainLive),
      Effect.never.pipe(
        Effect.onInterrupt(() =>
          Effect.logInfo("stopping: accepting nothing new, finishing in-flight requests"),
        ),
      ),
    ),
  ).pipe(
    Effect.onInterrupt(() => Effect.logInfo("stopped")),
    Logger.withMinimumLogLevel(level),
  )
}).pipe(
  // A failure to start (a bad setting, the database out of reach) is one JSON line naming its cause.
  Effect.tapErrorCause((cause) =>
    Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("the API could not start", cause),
  ),
  // JSON lines on stdout. Provided around everything, layers included: a logger provided to a layer with
  // Layer.provide does not reach the fibers that layer's dependents start, and nothing would print.
  // The request id is annotated by the server middleware; no setting, header or body is ever logged.
  Effect.provide(Logger.json),
)

NodeRuntime.runMain(program, { disablePrettyLogger: true, disableErrorReporting: true })

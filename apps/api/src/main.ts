import { readFileSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { DatabaseLive } from "@points/infrastructure"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { Settings } from "./config.js"
import { HttpAppLive, UserActivationLive, WriteSideLive } from "./server.js"

// JSON lines, with the request id annotated by the middleware; secrets and tokens are never logged.
const LoggingLive = Logger.replace(Logger.defaultLogger, Logger.jsonLogger)

const logLevel = (() => {
  const level = LogLevel.allLevels.find(
    (candidate) => candidate.label === (process.env.LOG_LEVEL ?? "INFO").toUpperCase(),
  )
  return level ?? LogLevel.Info
})()

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
    return NodeHttpServer.layer(create, { port: settings.port, host: settings.host })
  }),
)

const MainLive = Layer.mergeAll(HttpAppLive, UserActivationLive).pipe(
  Layer.provide(ServerLive),
  Layer.provide(WriteSideLive),
  Layer.provide(Settings.layer),
  Layer.provide(DatabaseLive),
  Layer.provide(LoggingLive),
)

// SIGTERM/SIGINT interrupt the main fiber: the server stops accepting, in-flight requests finish, the
// consumers stop, the pool and the embedded database close, in that order (layers release in reverse).
NodeRuntime.runMain(Layer.launch(MainLive).pipe(Logger.withMinimumLogLevel(logLevel)))

import { readFileSync } from "node:fs"
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { housekeepingLayer } from "@points/infrastructure"
import { Duration, Effect, Layer, Option } from "effect"
import { Settings } from "./config.js"
import { apiHttpServer, apiHttpsServer } from "./http/node-server.js"
import { HttpAppLive, UserActivationLive } from "./server.js"

/** The HTTP(S) server on PORT/HOST: HTTPS when TLS_CERT_FILE and TLS_KEY_FILE are set. */
const ServerLive = Layer.unwrapEffect(
  Effect.map(Settings, (settings) => {
    const tls = Option.zipWith(settings.tlsCertFile, settings.tlsKeyFile, (cert, key) => ({
      cert: readFileSync(cert),
      key: readFileSync(key),
    }))
    const create = Option.match(tls, {
      onNone: () => apiHttpServer,
      onSome: (options) => () => apiHttpsServer(options),
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

/** Deletes expired idempotency keys, tokens and idle rate-limit rows every HOUSEKEEPING_INTERVAL_SECONDS. */
const HousekeepingLive = Layer.unwrapEffect(
  Effect.map(Settings, (settings) =>
    housekeepingLayer(Duration.seconds(settings.housekeepingIntervalSeconds)),
  ),
)

/**
 * The API as a service: the HTTP(S) server with every endpoint, and the user activation consumer. Needs the
 * database and the write side (WriteSideLive), so that a process running more than the API shares them.
 */
export const ApiServiceLive = Layer.mergeAll(HttpAppLive, UserActivationLive, HousekeepingLive).pipe(
  Layer.provide(ServerLive),
  Layer.provide(Settings.layer),
)

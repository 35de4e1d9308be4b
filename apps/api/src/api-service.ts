import { readFileSync } from "node:fs"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { housekeepingLayer, rootMessage, StartFailure, UserActivationLive } from "@points/infrastructure"
import { Duration, Effect, Layer, Option } from "effect"
import { Settings } from "./config.js"
import { ApiNodeServer, apiHttpServer, apiHttpsServer, drainServer } from "./http/node-server.js"
import { HttpAppLive } from "./server.js"

// A file a setting names, read at start: one that cannot be read stops the start naming the setting.
const readSettingFile = (setting: string, path: string) =>
  Effect.try({
    try: () => readFileSync(path),
    catch: (error) =>
      new StartFailure({ message: `${setting} (${path}) cannot be read: ${rootMessage(error)}` }),
  })

// Node checks the certificate and key when it makes the server (PEM, the key matching the certificate).
const httpsServerOf = (files: { readonly cert: string; readonly key: string }) =>
  Effect.gen(function* () {
    const cert = yield* readSettingFile("TLS_CERT_FILE", files.cert)
    const key = yield* readSettingFile("TLS_KEY_FILE", files.key)
    return yield* Effect.try({
      try: () => apiHttpsServer({ cert, key }),
      catch: (error) =>
        new StartFailure({
          message: `TLS_CERT_FILE and TLS_KEY_FILE are not a certificate and its private key: ${rootMessage(error)}`,
        }),
    })
  })

/** The Node server: HTTPS when TLS_CERT_FILE and TLS_KEY_FILE are set, HTTP otherwise. */
const NodeServerLive = Layer.effect(
  ApiNodeServer,
  Effect.flatMap(Settings, (settings) =>
    Option.match(
      Option.zipWith(settings.tlsCertFile, settings.tlsKeyFile, (cert, key) => ({ cert, key })),
      { onNone: () => Effect.sync(() => apiHttpServer()), onSome: httpsServerOf },
    ),
  ),
)

// An IPv6 address in brackets, as a URL writes it (http://[::1]:3000).
const urlHost = (hostname: string) => (hostname.includes(":") ? `[${hostname}]` : hostname)

/** The HTTP(S) server listening on PORT/HOST. */
const ServerLive = Layer.unwrapEffect(
  Effect.map(Effect.all([Settings, ApiNodeServer]), ([settings, server]) => {
    const scheme = Option.isSome(settings.tlsCertFile) ? "https" : "http"
    // One line saying where it listens: operators (and the process tests) wait for it.
    // With no ADMIN_TOKEN the admin API answers 404 like any unknown path: say so once, where it is looked for.
    const admin = Option.isSome(settings.adminToken)
      ? "admin API on /admin/api"
      : "admin API off (ADMIN_TOKEN unset)"
    const listening = Layer.effectDiscard(
      Effect.flatMap(HttpServer.HttpServer, (http) =>
        http.address._tag === "TcpAddress"
          ? Effect.logInfo(
              `listening on ${scheme}://${urlHost(http.address.hostname)}:${http.address.port}; ${admin}`,
            )
          : Effect.logInfo(`listening on ${http.address.path}; ${admin}`),
      ),
    )
    const address = `${settings.host}:${settings.port}`
    return Layer.provideMerge(
      listening,
      NodeHttpServer.layer(() => server, { port: settings.port, host: settings.host }).pipe(
        Layer.mapError(
          (error) =>
            new StartFailure({
              message: `cannot listen on ${address} (HOST, PORT): ${rootMessage(error.cause)}`,
            }),
        ),
      ),
    )
  }),
)

/**
 * The endpoints, stopped gracefully: on release the server first stops accepting and drains (drainServer)
 * while every handler and what they use (the rate limiter, the token cache) still runs; only then are those
 * released. Released the other way round, the server lost its request handler first, and a request arriving
 * on a kept-alive connection was never answered, nor the process ever stopped.
 */
const ServingLive = Layer.scopedDiscard(
  Effect.flatMap(ApiNodeServer, (server) => Effect.addFinalizer(() => drainServer(server))),
).pipe(Layer.provide(HttpAppLive))

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
export const ApiServiceLive = Layer.mergeAll(ServingLive, UserActivationLive, HousekeepingLive).pipe(
  Layer.provide(ServerLive),
  Layer.provide(NodeServerLive),
  Layer.provide(Settings.layer),
)

import { DatabaseLive, runService, WriteSideLive } from "@points/infrastructure"
import { ProjectionsLive, projectionSettings } from "@points/projections"
import { Config, Layer } from "effect"
import { ApiServiceLive } from "./api-service.js"
import { apiSettings } from "./config.js"

// `npm start`: the whole platform in one process, the API and every consumer of the event log sharing one
// pool and one LISTEN connection. In production they run apart (`nx serve api`, `nx serve projections`).
runService({
  name: "the platform",
  settings: Config.all([apiSettings, projectionSettings]),
  // user activation, webhook fan-out, order fulfilment
  lockConnections: 3,
  layer: Layer.mergeAll(ApiServiceLive, ProjectionsLive).pipe(
    Layer.provide(WriteSideLive),
    Layer.provide(DatabaseLive),
  ),
})

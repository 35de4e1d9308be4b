import { DatabaseLive, runService, WriteSideLive } from "@points/infrastructure"
import { Layer } from "effect"
import { projectionSettings } from "./config.js"
import { ProjectionsLive } from "./projections.js"

runService({
  name: "the projections",
  settings: projectionSettings,
  // the webhook fan-out and the order fulfilment
  lockConnections: 2,
  layer: ProjectionsLive.pipe(Layer.provide(WriteSideLive), Layer.provide(DatabaseLive)),
})

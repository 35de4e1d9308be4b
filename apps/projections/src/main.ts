import { DatabaseLive, runService, WriteSideLive } from "@points/infrastructure"
import { Layer } from "effect"
import { projectionSettings } from "./config.js"
import { ProjectionsLive } from "./projections.js"

runService({
  name: "the projections",
  settings: projectionSettings,
  layer: ProjectionsLive.pipe(Layer.provide(WriteSideLive), Layer.provide(DatabaseLive)),
})

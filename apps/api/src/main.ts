import { DatabaseLive, runService, WriteSideLive } from "@points/infrastructure"
import { Layer } from "effect"
import { ApiServiceLive } from "./api-service.js"
import { apiSettings } from "./config.js"

runService({
  name: "the API",
  settings: apiSettings,
  // the user-activation consumer
  lockConnections: 1,
  layer: ApiServiceLive.pipe(Layer.provide(WriteSideLive), Layer.provide(DatabaseLive)),
})

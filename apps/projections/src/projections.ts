import { OrderFulfilmentLive, webhookDeliveryLayer } from "@points/infrastructure"
import { Effect, Layer } from "effect"
import { type ProjectionSettings, projectionSettings } from "./config.js"

/** The consumers of the event log this app runs, with the given settings. */
export const projectionsWith = (settings: ProjectionSettings) =>
  Layer.mergeAll(
    OrderFulfilmentLive({
      delay: settings.fulfilmentDelay,
      pollInterval: "1 second",
      concurrency: settings.fulfilmentConcurrency,
    }),
    webhookDeliveryLayer({
      dispatcher: {
        retrySchedule: settings.webhookRetrySchedule,
        allowPrivateTargets: settings.webhookAllowPrivateTargets,
        perPartnerConcurrency: settings.webhookPartnerConcurrency,
      },
    }),
  )

/**
 * Every asynchronous consumer of the event log (sandbox order fulfilment, webhook fan-out and dispatcher),
 * with the settings from the environment. Each coordinates through PostgreSQL, so any number of processes
 * may run it against one database. Needs the database and the write side (WriteSideLive).
 */
export const ProjectionsLive = Layer.unwrapEffect(Effect.map(projectionSettings, projectionsWith))

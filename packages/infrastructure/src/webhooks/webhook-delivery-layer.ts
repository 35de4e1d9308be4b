import { Effect, Layer } from "effect"
import { runWebhookDispatcher } from "./dispatcher.js"
import type { DispatcherOptions } from "./dispatcher-options.js"
import { type FanOutOptions, runWebhookFanOut } from "./fan-out.js"

/**
 * Webhook delivery for as long as the layer lives: the fan-out consumer (one active across processes, the
 * others standing by) and a dispatcher (any number across processes share the work). For the projections
 * app and `npm start`; needs the database, the LogListener, the InlineProjection and the LogNotifier.
 */
export const webhookDeliveryLayer = (
  options: { readonly fanOut?: FanOutOptions; readonly dispatcher?: DispatcherOptions } = {},
) =>
  Layer.scopedDiscard(
    Effect.all([
      Effect.forkScoped(runWebhookFanOut(options.fanOut)),
      Effect.forkScoped(runWebhookDispatcher(options.dispatcher)),
    ]),
  )

import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { PointsApi } from "@points/http-api"
import { pingDatabase } from "@points/infrastructure"
import { Effect } from "effect"
import { unavailable } from "../http/api-error-of.js"
import { prometheusText } from "../http/metrics.js"

/** Liveness, readiness (the database answers) and Prometheus metrics. */
export const HealthLive = HttpApiBuilder.group(PointsApi, "health", (handlers) =>
  handlers
    .handle("live", () => Effect.succeed({ status: "ok" as const }))
    .handle("ready", () =>
      Effect.gen(function* () {
        // The probe runs to its end in the background if it is slow: interrupting a query makes
        // @effect/sql-pg cancel its backend, which may by then serve another request.
        yield* pingDatabase.pipe(
          Effect.uninterruptible,
          Effect.disconnect,
          Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => unavailable() }),
          Effect.catchAll(() => Effect.fail(unavailable())),
        )
        return { status: "ok" as const, database: "ok" as const }
      }),
    )
    .handle("metrics", () => prometheusText),
)

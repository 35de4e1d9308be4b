import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { PointsApi } from "@points/http-api"
import { Effect } from "effect"
import { unavailable } from "../http/api-error-of.js"
import { prometheusText } from "../http/metrics.js"

/** Liveness, readiness (the database answers) and Prometheus metrics. */
export const HealthLive = HttpApiBuilder.group(PointsApi, "health", (handlers) =>
  handlers
    .handle("live", () => Effect.succeed({ status: "ok" as const }))
    .handle("ready", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`SELECT 1`.pipe(
          Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => unavailable() }),
          Effect.catchAll(() => Effect.fail(unavailable())),
        )
        return { status: "ok" as const, database: "ok" as const }
      }),
    )
    .handle("metrics", () => prometheusText),
)

import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"
import { ErrorAt } from "../api-error.js"

/** Liveness and readiness for orchestrators, and Prometheus metrics; no authentication. */
export class HealthGroup extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("live", "/health/live").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })),
  )
  .add(
    HttpApiEndpoint.get("ready", "/health/ready")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok"), database: Schema.Literal("ok") }))
      .addError(ErrorAt[503]),
  )
  .add(
    HttpApiEndpoint.get("metrics", "/metrics").addSuccess(
      Schema.String.pipe(
        HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain; version=0.0.4" }),
      ),
    ),
  ) {}

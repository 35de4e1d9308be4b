import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type ApiError, ErrorAt } from "@points/http-api"
import { Effect, Schema } from "effect"

/** The published JSON body of an ApiError, as the exact text sent (and recorded for replays). */
export const errorBodyText = (error: ApiError): string =>
  JSON.stringify(Schema.encodeSync(ErrorAt[error.status])(error))

/** An ApiError as a response, for the places that answer before the HttpApi router does. */
export const errorResponse = (error: ApiError) =>
  Effect.succeed(
    HttpServerResponse.text(errorBodyText(error), { status: error.status, contentType: "application/json" }),
  )

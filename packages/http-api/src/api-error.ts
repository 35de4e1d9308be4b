import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { ErrorCode } from "@points/domain"
import { Schema } from "effect"

/**
 * The `code` of an error entry: one of DESIGN.md section 5's codes, or one a later version of the API adds
 * (the published `code` is a string). A client built against this contract still reads such an answer as the
 * error it is, with its status and message, rather than as an answer outside the contract.
 */
export const AnyErrorCode = Schema.Union(
  ErrorCode,
  Schema.String.pipe(
    Schema.brand("LaterErrorCode"),
    Schema.annotations({ description: "a code added by a later version of the API" }),
  ),
)
export type AnyErrorCode = typeof AnyErrorCode.Type

/** One problem found with a request: `id` identifies this occurrence (quote it to support). */
export const ErrorEntry = Schema.Struct({
  id: Schema.String,
  code: AnyErrorCode,
  message: Schema.String,
}).pipe(Schema.annotations({ identifier: "ErrorEntry" }))
export type ErrorEntry = typeof ErrorEntry.Type

/** The published error body: one entry per problem; the OAuth endpoints add RFC 6749 `error` fields. */
export const ErrorBody = Schema.Struct({
  errors: Schema.NonEmptyArray(ErrorEntry),
  error: Schema.optional(Schema.String),
  error_description: Schema.optional(Schema.String),
}).pipe(Schema.annotations({ identifier: "ErrorBody" }))
export type ErrorBody = typeof ErrorBody.Type

/** The statuses errors are answered with (DESIGN.md section 5). */
export const errorStatuses = [400, 401, 404, 409, 413, 415, 422, 429, 500, 503] as const
export type ErrorStatus = (typeof errorStatuses)[number]

/**
 * Any error answer of the API: its status and the published body. Handlers fail with it; the client SDK
 * receives it. Built from the domain's typed errors in one place (`apiErrorOf` in the app).
 */
export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  status: Schema.Literal(...errorStatuses),
  errors: Schema.NonEmptyArray(ErrorEntry),
  error: Schema.optional(Schema.String),
  error_description: Schema.optional(Schema.String),
}) {
  override get message() {
    return this.errors.map((entry) => `${entry.code}: ${entry.message}`).join("; ")
  }
}

/**
 * What each error status means across the API: the heading of an error response in the OpenAPI document, which
 * then names the codes its operation answers with it, and for a 500 or 503 how to retry (errorCodesInDocument).
 */
export const errorMeaning: Readonly<Record<ErrorStatus, string>> = {
  400: "The request is malformed (one error entry per problem found)",
  401: "Not authenticated",
  404: "Not found",
  409: "Conflict with the current state",
  413: "Payload too large",
  415: "Unsupported media type",
  422: "Refused",
  429: "Too many requests; Retry-After says when to try again",
  500: "A failure of ours",
  503: "Unavailable; Retry-After says when to try again",
}

// One schema per status, because HttpApi reads a status from each error schema: on the wire it is the
// published body, in code an ApiError of that status.
const errorAt = (status: ErrorStatus) =>
  Schema.transform(
    ErrorBody,
    Schema.declare(
      (input: unknown): input is ApiError => input instanceof ApiError && input.status === status,
      {
        identifier: `ApiError${status}`,
      },
    ),
    {
      strict: true,
      decode: (body) => new ApiError({ status, ...body }),
      encode: ({ errors, error, error_description }) => ({
        errors,
        ...(error === undefined ? {} : { error }),
        ...(error_description === undefined ? {} : { error_description }),
      }),
    },
  ).annotations(HttpApiSchema.annotations({ status, description: errorMeaning[status] }))

/** The error schema of each status, to declare on endpoints (and documented in the OpenAPI document). */
export const ErrorAt = {
  400: errorAt(400),
  401: errorAt(401),
  404: errorAt(404),
  409: errorAt(409),
  413: errorAt(413),
  415: errorAt(415),
  422: errorAt(422),
  429: errorAt(429),
  500: errorAt(500),
  503: errorAt(503),
} as const

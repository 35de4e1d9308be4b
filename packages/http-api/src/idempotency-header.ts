import { Schema } from "effect"

const about =
  "1 to 255 printable ASCII characters, bare or as a quoted string, sent once. The first answer that is a " +
  "2xx, 400, 404 or 409 is recorded for 24 hours and replayed, with `Idempotent-Replayed: true`, to every " +
  "retry with the key; the key with another method, path or body is 422 IK1001, and while the first request " +
  "runs, 409 IK1002. A 401 or 429 comes before the key is claimed: nothing ran and the key stays unused. " +
  "A bad value is 400 GH1006."

/** The Idempotency-Key header of a POST under /api (DESIGN.md section 4), documented in the OpenAPI document. */
export const IdempotencyKeyHeader = Schema.Struct({
  "idempotency-key": Schema.optional(
    Schema.String.annotations({ description: `Optional. Without it nothing is replayed. ${about}` }),
  ),
})

/**
 * The Idempotency-Key header of Create order, where it is required: its absence is answered 400 IK1003 by the
 * handler (so the schema keeps it optional, and a missing key gets its own code); the OpenAPI document marks
 * it required (keyRequiredInDocument).
 */
export const RequiredIdempotencyKeyHeader = Schema.Struct({
  "idempotency-key": Schema.optional(
    Schema.String.annotations({ description: `Required: 400 IK1003 without it. ${about}` }),
  ),
})

interface DocumentedParameter {
  readonly in?: unknown
  readonly name?: unknown
}

/**
 * An OpenAPI transform of an operation that takes RequiredIdempotencyKeyHeader: documents the header as
 * `required: true`, which the schema cannot say without turning IK1003 into a schema failure.
 */
export const keyRequiredInDocument = (operation: Record<string, unknown>): Record<string, unknown> => {
  const parameters: ReadonlyArray<DocumentedParameter> = Array.isArray(operation.parameters)
    ? operation.parameters
    : []
  return {
    ...operation,
    parameters: parameters.map((parameter) =>
      parameter.in === "header" && parameter.name === "idempotency-key"
        ? { ...parameter, required: true }
        : parameter,
    ),
  }
}

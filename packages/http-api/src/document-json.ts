/** A JSON object of the OpenAPI document, as its transforms read and rebuild it. */
export type Json = Record<string, unknown>

/** The members of a JSON object of the document (none when it is absent or not an object). */
export const entriesOf = (value: unknown): Array<[string, Json]> =>
  typeof value === "object" && value !== null ? (Object.entries(value) as Array<[string, Json]>) : []

/** Whether an operation of the document requires the named security scheme. */
export const securedBy = (operation: Json, scheme: string) =>
  Array.isArray(operation.security) && operation.security.some((requirement: Json) => scheme in requirement)

/** The document with every operation rebuilt by `f`, which is given the operation's path and method. */
export const mapOperations = (
  spec: Json,
  f: (path: string, operation: Json, method: string) => Json,
): Json => ({
  ...spec,
  paths: Object.fromEntries(
    entriesOf(spec.paths).map(([path, item]) => [
      path,
      Object.fromEntries(entriesOf(item).map(([method, operation]) => [method, f(path, operation, method)])),
    ]),
  ),
})

/** The document with every response of every operation rebuilt by `f`. */
export const mapResponses = (
  spec: Json,
  f: (path: string, operation: Json, status: string, response: Json) => Json,
): Json =>
  mapOperations(spec, (path, operation) => ({
    ...operation,
    responses: Object.fromEntries(
      entriesOf(operation.responses).map(([status, response]) => [
        status,
        f(path, operation, status, response),
      ]),
    ),
  }))

/** Whether a path is one of the OAuth token endpoints (client credentials, not a bearer token). */
export const isTokenEndpoint = (path: string) => path.startsWith("/api/oauth/")

/** An operation's Idempotency-Key header parameter, if it takes one. */
const idempotencyKeyOf = (operation: Json): Json | undefined =>
  Array.isArray(operation.parameters)
    ? operation.parameters.find(
        (parameter: Json) => parameter.in === "header" && parameter.name === "idempotency-key",
      )
    : undefined

/** Whether an operation of the document takes an Idempotency-Key (every POST under /api but OAuth's). */
export const takesIdempotencyKey = (operation: Json) => idempotencyKeyOf(operation) !== undefined

/** Whether an operation of the document requires its Idempotency-Key (Create order). */
export const requiresIdempotencyKey = (operation: Json) => idempotencyKeyOf(operation)?.required === true

import { type ErrorStatus, errorMeaning, errorStatuses } from "./api-error.js"
import {
  entriesOf,
  isTokenEndpoint,
  type Json,
  mapOperations,
  requiresIdempotencyKey,
  securedBy,
  takesIdempotencyKey,
} from "./document-json.js"
import { type CodesAt, operationErrors } from "./operation-errors.js"

/** The extension of an error response of the document that lists the codes it carries. */
export const ERROR_CODES_EXTENSION = "x-error-codes"

// The codes every operation of a kind answers with `status`: refusals made before its own rules run.
const codesOfKind = (path: string, operation: Json, status: ErrorStatus): CodesAt => {
  const oauth = isTokenEndpoint(path)
  const admin = securedBy(operation, "adminToken")
  const keyed = takesIdempotencyKey(operation)
  switch (status) {
    case 400:
      return { GH1006: "an invalid field, query parameter or header, each named in its entry's message" }
    case 401:
      if (oauth) return { GH1001: "the client credentials are missing or wrong" }
      if (admin) return { GH1003: "the admin token is missing or wrong" }
      return { GH1003: "the token is missing, malformed, unknown, expired or revoked" }
    case 404:
      return {
        NN1002: admin
          ? "the path names no route, or the admin API is off (no ADMIN_TOKEN)"
          : "the path names no route",
      }
    case 409:
      return keyed ? { IK1002: "a request with the same Idempotency-Key is in progress" } : {}
    case 413:
      return { GH1008: oauth ? "the body is over 16 KiB (16384 bytes)" : "the body is over 1 MiB" }
    case 415:
      return {
        GH1010: `${oauth ? "the body is neither form-urlencoded nor JSON" : "the body is not application/json"}, or is sent with a Content-Encoding (compressed): send it as is`,
      }
    case 422:
      return keyed
        ? { IK1001: "the Idempotency-Key was used for another request (method, path or body)" }
        : {}
    case 429:
      return {
        GH1009: oauth
          ? "the token requests from the caller's network, or for the client, are over their limit"
          : admin
            ? "the caller's network sent wrong admin tokens too often lately: its token is not compared until Retry-After"
            : "the partner's requests are over its rate limit, or the caller's network sent refused tokens too often lately (its tokens are not looked up until Retry-After)",
      }
    case 500:
      return { SV5000: "an unexpected error, logged; nothing of its cause is shown" }
    case 503:
      return {
        SV5003:
          "the database is out of reach, or too many bodies are arriving at once (in the process, or from the caller's network)",
      }
  }
}

// What a client should do after a 500 or 503: whether a retry can repeat what the first attempt may have done
// depends on the operation. Only the POSTs under /api replay a recorded answer; the admin API takes no key.
const retryAdvice = (path: string, operation: Json, method: string): string => {
  if (takesIdempotencyKey(operation)) {
    const replayed =
      "retry with the same Idempotency-Key (a write recorded under it is replayed, not repeated"
    return requiresIdempotencyKey(operation)
      ? `The outcome is indeterminate: ${replayed})`
      : `The outcome is indeterminate: ${replayed}; without a key a retry may repeat it)`
  }
  if (method === "get") return "Safe to retry: a GET changes nothing"
  if (method === "patch") return "Safe to retry: the retry sets the same fields again"
  if (method === "delete") {
    return "Safe to retry: if the first attempt took effect, the retry is answered as a repeat (404 or 409) and changes nothing"
  }
  if (isTokenEndpoint(path)) {
    return "Safe to retry: a repeated token request issues another token, a repeated revocation changes nothing"
  }
  return "The outcome is indeterminate and the admin API takes no Idempotency-Key, so a retry may repeat the write: check what exists first (list before creating again)"
}

const errorStatusOf = (status: string): ErrorStatus | undefined =>
  errorStatuses.find((errorStatus) => String(errorStatus) === status)

/** The codes an operation of the document answers with `status`: its own first, then those of its kind. */
const codesAt = (path: string, operation: Json, status: ErrorStatus): ReadonlyArray<[string, string]> => {
  const own = operationErrors[String(operation.operationId)]?.[status] ?? {}
  const ofKind = codesOfKind(path, operation, status)
  const merged = new Map<string, string>(Object.entries(own) as Array<[string, string]>)
  for (const [code, when] of Object.entries(ofKind) as Array<[string, string]>) {
    if (!merged.has(code)) merged.set(code, when)
  }
  return [...merged]
}

const describedError = (
  path: string,
  operation: Json,
  method: string,
  status: ErrorStatus,
  response: Json,
) => {
  const codes = codesAt(path, operation, status)
  const listed = codes.map(([code, when]) => `${when} (${code})`).join("; ")
  const advice = status === 500 || status === 503 ? ` ${retryAdvice(path, operation, method)}.` : ""
  const description = `${errorMeaning[status]}: ${listed}.${advice}`
  const content = Object.fromEntries(
    entriesOf(response.content).map(([mediaType, media]) => [
      mediaType,
      { ...media, schema: { ...(media.schema as Json | undefined), description } },
    ]),
  )
  return { ...response, description, content, [ERROR_CODES_EXTENSION]: codes.map(([code]) => code) }
}

/**
 * An OpenAPI transform of the whole document: each error response of each operation names the codes that
 * operation answers with it (`x-error-codes`, and in its description with when each is given): its own, from
 * operationErrors, and those every operation of its kind answers. A 500 and a 503 say how to retry there: with
 * the same Idempotency-Key where one is taken, freely where a retry cannot repeat a write, and after checking
 * what exists on the admin API, which takes no key.
 */
export const errorCodesInDocument = (spec: Json): Json =>
  mapOperations(spec, (path, operation, method) => ({
    ...operation,
    responses: Object.fromEntries(
      entriesOf(operation.responses).map(([status, response]) => {
        const errorStatus = errorStatusOf(status)
        return [
          status,
          errorStatus === undefined
            ? response
            : describedError(path, operation, method, errorStatus, response),
        ]
      }),
    ),
  }))

import type { PlatformError } from "@points/domain"
import { ApiError, type ErrorEntry, type ErrorStatus, routedPath } from "@points/http-api"
import { uuidV7 } from "@points/infrastructure"

/** One entry of the published error body, with a fresh id for this occurrence. */
export const entryOf = (code: ErrorEntry["code"], message: string): ErrorEntry => ({
  id: uuidV7(),
  code,
  message,
})

/** The answer to a domain error: its status, code and message, in the published body. */
export const apiErrorOf = (error: PlatformError): ApiError =>
  new ApiError({ status: error.status as ErrorStatus, errors: [entryOf(error.code, error.message)] })

/** True when a failure is one of the domain's typed errors (it carries a code, a status and a message). */
export const isPlatformError = (error: unknown): error is PlatformError =>
  typeof error === "object" &&
  error !== null &&
  "code" in error &&
  "status" in error &&
  typeof (error as { code: unknown }).code === "string" &&
  typeof (error as { status: unknown }).status === "number"

/** SV5000: what a failure of ours looks like from outside: no internals. */
export const unexpected = () =>
  new ApiError({ status: 500, errors: [entryOf("SV5000", "unexpected server error")] })

/** SV5003: the database is out of reach; retry after a few seconds. */
export const unavailable = () =>
  new ApiError({ status: 503, errors: [entryOf("SV5003", "service unavailable: retry later")] })

// The socket's errors (Node's errno codes) and PostgreSQL's SQLSTATEs of a server that cannot serve now:
// class 08 (connection exception), 53300 (too many connections), 57P01-57P03 (shut down by an administrator,
// crashed, not accepting connections: starting up or shutting down).
const UNREACHABLE_ERRNO =
  /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)$/
const UNAVAILABLE_SQLSTATE = /^(08...|53300|57P0[123])$/
// What pg and its pool say, with no code, of a connection that ended, broke (a query on a client whose
// connection failed), or could not be had in time; and the first connection's check at start (statementPool,
// PgClient), timed out by a server that accepts connections and never answers.
const UNREACHABLE_MESSAGE =
  /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|^Connection timed out$/

/**
 * True when a failure is a SqlError of a database out of reach or not serving (answered 503 SV5003, not 500):
 * whatever the request did rolled back unless its commit got through, and either way a retry with its key
 * is safe. Read from the cause's code, the SQLSTATE or errno, not its text: PostgreSQL's "the database system
 * is starting up" carries 57P03 only in its code.
 */
export const isDatabaseUnreachable = (defect: unknown): boolean => {
  if ((defect as { _tag?: string } | null)?._tag !== "SqlError") return false
  for (let cause = (defect as { cause?: unknown }).cause, depth = 0; cause != null && depth < 5; depth++) {
    const { code, message } = cause as { code?: unknown; message?: unknown }
    if (typeof code === "string" && (UNREACHABLE_ERRNO.test(code) || UNAVAILABLE_SQLSTATE.test(code)))
      return true
    if (typeof message === "string" && UNREACHABLE_MESSAGE.test(message)) return true
    cause = (cause as { cause?: unknown }).cause
  }
  return false
}

/** True for the paths of the admin API (Bearer ADMIN_TOKEN; absent when ADMIN_TOKEN is unset). */
export const isAdminPath = (path: string): boolean => {
  const routed = routedPath(path)
  return routed === "/admin/api" || routed.startsWith("/admin/api/")
}

/**
 * True for the paths of the OAuth endpoints, whose answers follow RFC 6749 as well as DESIGN.md; read as the
 * router reads them (`/api/%6Fauth/token` is the token endpoint).
 */
export const isOAuthPath = (path: string): boolean => routedPath(path).startsWith("/api/oauth/")

// RFC 6749 5.2 names the token endpoint's codes; a refusal it has no code for is `invalid_request`. It has no
// code for throttling either: a 429, like a 503, is `temporarily_unavailable` (RFC 6749 4.1.2.1), the one
// code that tells a client to come back later rather than to fix its request or its credentials.
const oauthErrorOf = (status: number, code: string): string => {
  if (code === "GH1001") return "invalid_client"
  if (code === "GH1007") return "unsupported_grant_type"
  if (status === 429 || status === 503) return "temporarily_unavailable"
  return status >= 500 ? "server_error" : "invalid_request"
}

/**
 * The RFC 6749 `error` and `error_description` of an error answered on `path` with `status`, its first entry
 * `entry`, none outside the OAuth endpoints: for an answer that is no ApiError (Node's 431); see withOAuthFields.
 */
export const oauthFieldsOf = (
  path: string,
  status: number,
  entry: ErrorEntry,
): { readonly error?: string; readonly error_description?: string } =>
  isOAuthPath(path) ? { error: oauthErrorOf(status, entry.code), error_description: entry.message } : {}

/**
 * An error of the OAuth endpoints carries the RFC 6749 `error` and `error_description` beside `errors`
 * (DESIGN.md section 5), also when it is answered before the endpoint's handler runs (413, 415, a bad form).
 */
export const withOAuthFields = (path: string, error: ApiError): ApiError =>
  !isOAuthPath(path) || error.error !== undefined
    ? error
    : new ApiError({
        status: error.status,
        errors: error.errors,
        ...oauthFieldsOf(path, error.status, error.errors[0]),
      })

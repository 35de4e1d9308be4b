import type { PlatformError } from "@points/domain"
import { ApiError, type ErrorEntry, type ErrorStatus } from "@points/http-api"
import { v7 as uuidV7 } from "uuid"

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

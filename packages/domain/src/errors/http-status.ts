import type { ErrorCode } from "./error-code.js"

/** The HTTP statuses the platform answers errors with. */
export type HttpStatus = 400 | 401 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 503

/**
 * The one table from error code to HTTP status (DESIGN.md section 5). Its type is derived from the error
 * classes, so a new error code without a row here does not compile, and neither does a row without a code.
 * LE1001 is the one code with two statuses: 409 for a second account, 400 for a malformed
 * `transaction.user_id` (see `PointsAccountConflict`).
 */
export const errorStatus: { readonly [Code in ErrorCode]: HttpStatus } = {
  NN1002: 404,
  GH1001: 401,
  GH1003: 401,
  GH1006: 400,
  GH1007: 400,
  GH1008: 413,
  GH1009: 429,
  GH1010: 415,
  LE0001: 409,
  LE0002: 404,
  LE0004: 409,
  LE0006: 409,
  LE0007: 409,
  LE0008: 409,
  LE1001: 409,
  LE2001: 422,
  LE2002: 422,
  LE3001: 409,
  IK1001: 422,
  IK1002: 409,
  IK1003: 400,
  SV5000: 500,
  SV5003: 503,
}

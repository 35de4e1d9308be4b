import { Schema } from "effect"
import type { FingerprintPart } from "../errors/idempotency-errors.js"

/**
 * What a key remembers of the request that first used it: the method, the concrete path
 * (`/api/orders/<id>/cancel`, not the route template) and the SHA-256 (lowercase hex) of the canonical body.
 */
export const RequestFingerprint = Schema.Struct({
  method: Schema.String.pipe(
    Schema.pattern(/^[A-Z]+$/, { message: () => "must be an upper-case HTTP method" }),
  ),
  path: Schema.String.pipe(Schema.pattern(/^\/\S*$/, { message: () => "must be an absolute request path" })),
  bodySha256: Schema.String.pipe(
    Schema.pattern(/^[0-9a-f]{64}$/, { message: () => "must be a lowercase hex SHA-256 digest" }),
  ),
}).annotations({ identifier: "RequestFingerprint" })
export type RequestFingerprint = typeof RequestFingerprint.Type

/** The parts in which two requests differ (method, path, body, in that order); empty when they are the same. */
export const differingParts = (a: RequestFingerprint, b: RequestFingerprint): Array<FingerprintPart> => {
  const parts: Array<FingerprintPart> = []
  if (a.method !== b.method) parts.push("method")
  if (a.path !== b.path) parts.push("path")
  if (a.bodySha256 !== b.bodySha256) parts.push("body")
  return parts
}

/** Whether two fingerprints are of the same request: a retry, not another request with the key. */
export const sameRequest = (a: RequestFingerprint, b: RequestFingerprint): boolean =>
  differingParts(a, b).length === 0

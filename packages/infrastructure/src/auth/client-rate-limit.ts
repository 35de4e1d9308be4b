import { createHash } from "node:crypto"
import { idAsIssued } from "@points/domain"
import { consumeRateLimit } from "../rate-limit/consume-rate-limit.js"
import type { RateLimitPolicy } from "../rate-limit/rate-limit-policy.js"

/** The token endpoints' limit per client id, against guessing secrets (DESIGN.md section 7). */
export const CLIENT_RATE_LIMIT: RateLimitPolicy = { ratePerSecond: 5, burst: 20 }

/**
 * The rate-limit key of a client id as the caller sent it, checked or not: its SHA-256, so that any text (a
 * NUL, kilobytes of it) makes a short key that PostgreSQL stores and indexes, and one id is always one key.
 * A UUID is read in the case ids are issued in, as the credential lookup reads it: otherwise each way of
 * writing one id in upper and lower case would give a client guessing its secret a fresh bucket.
 */
export const clientRateLimitKey = (clientId: string): string =>
  `client:${createHash("sha256").update(idAsIssued(clientId), "utf8").digest("hex")}`

/**
 * Takes one request of the token endpoints from the client id's bucket (see consumeRateLimit), before its
 * secret is checked: a guessing client is slowed down whether the id exists or not.
 */
export const consumeClientRateLimit = (clientId: string) =>
  consumeRateLimit(clientRateLimitKey(clientId), CLIENT_RATE_LIMIT)

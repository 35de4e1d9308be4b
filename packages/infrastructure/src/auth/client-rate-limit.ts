import { createHash } from "node:crypto"
import { idAsIssued } from "@points/domain"
import { consumeRateLimit } from "../rate-limit/consume-rate-limit.js"
import type { RateLimitPolicy } from "../rate-limit/rate-limit-policy.js"
import { sourceOfAddress } from "./address-rate-limit.js"

/** The token endpoints' limit per client id and source, against guessing secrets (DESIGN.md section 7). */
export const CLIENT_RATE_LIMIT: RateLimitPolicy = { ratePerSecond: 5, burst: 20 }

/**
 * The rate-limit key of a client id as the caller sent it, checked or not, from the source of `address`: the
 * id's SHA-256, so that any text (a NUL, kilobytes of it) makes a short key that PostgreSQL stores and
 * indexes, and one id is always one key. A UUID is read in the case ids are issued in, as the credential
 * lookup reads it: otherwise each way of writing one id in upper and lower case would give a client guessing
 * its secret a fresh bucket. Per source, because a client id is not secret: a bucket per id alone let anyone
 * who knew one keep its partner from getting tokens. The source is an IPv4 address, or an IPv6 address's /48
 * (its site, as the address limits count it), so that one caller holding a /48 has one bucket per client.
 */
export const clientRateLimitKey = (clientId: string, address: string): string => {
  const source = sourceOfAddress(address)
  const id = createHash("sha256").update(idAsIssued(clientId), "utf8").digest("hex")
  return `client:${id}@${source.site ?? source.network}`
}

/**
 * Takes one request of the token endpoints from the bucket of the client id and the request's source
 * (see clientRateLimitKey), before its secret is checked: a guessing caller is slowed down whether the id
 * exists or not, and its guesses leave the client's own callers elsewhere their allowance.
 */
export const consumeClientRateLimit = (clientId: string, address: string) =>
  consumeRateLimit(clientRateLimitKey(clientId, address), CLIENT_RATE_LIMIT)

import { Effect } from "effect"
import ipaddr from "ipaddr.js"
import { consumeRateLimit, giveBackRateLimitCell } from "../rate-limit/consume-rate-limit.js"
import type { RateLimitPolicy } from "../rate-limit/rate-limit-policy.js"

/**
 * The token endpoints' limit per source network at `perSecond` requests a second, a burst of twice that. The
 * per-client limit cannot stop a caller that invents a new client id for every request, each of which still
 * costs one Argon2id check (authenticateClient): this one bounds what one network can make the API hash.
 */
export const addressRateLimitPolicy = (perSecond: number): RateLimitPolicy => ({
  ratePerSecond: perSecond,
  burst: perSecond * 2,
})

/**
 * How many networks' allowance the networks of one site (see sourceSiteOf) have together. Keyed by /64 alone,
 * a caller holding a /48 (handed out to a single customer, sometimes for free) would have 65,536 networks'
 * allowance; with this, two.
 */
export const NETWORKS_PER_SITE = 2

/** Where a request came from, as the limits per source count it: its network, and its site if it has one. */
export interface AddressSource {
  /** See sourceNetworkOf. */
  readonly network: string
  /** See sourceSiteOf. */
  readonly site: string | undefined
}

// The address's leading `bytes` bytes, the rest zero, written as a prefix of that many bytes.
const prefixOf = (address: ipaddr.IPv6, bytes: number) =>
  `${ipaddr.fromByteArray(address.toByteArray().map((byte, n) => (n < bytes ? byte : 0))).toString()}/${bytes * 8}`

/** The network and site of an address (see sourceNetworkOf, sourceSiteOf), the address read once. */
export const sourceOfAddress = (address: string): AddressSource => {
  if (!ipaddr.isValid(address)) return { network: address, site: undefined }
  const parsed = ipaddr.process(address)
  return parsed.kind() === "ipv4"
    ? { network: parsed.toString(), site: undefined }
    : { network: prefixOf(parsed as ipaddr.IPv6, 8), site: prefixOf(parsed as ipaddr.IPv6, 6) }
}

/**
 * The network a request came from, as the address limit counts it: an IPv4 address (IPv4-mapped IPv6 ones
 * included) alone, an IPv6 address by its /64, since one host is commonly given a whole /64 and could
 * otherwise take a new address for every request. Text that is not an address stands for itself.
 */
export const sourceNetworkOf = (address: string): string => sourceOfAddress(address).network

/**
 * The site an IPv6 address belongs to, as the limits per source network count it once more: its /48, the
 * prefix commonly given to one customer. An IPv4 address (mapped into IPv6 too) or text that is not an
 * address has none: its network is itself, and IPv4 addresses come one at a time.
 */
export const sourceSiteOf = (address: string): string | undefined => sourceOfAddress(address).site

// The rate-limit key of a source network.
const networkRateLimitKey = (network: string) => `address:${network}`

/** The rate-limit key of a request's source address (see sourceNetworkOf). */
export const addressRateLimitKey = (address: string): string => networkRateLimitKey(sourceNetworkOf(address))

/**
 * Takes one request of the token endpoints from its source network's bucket (see consumeRateLimit), before
 * the client's own bucket and before any secret is checked.
 */
export const consumeAddressRateLimit = (address: string, policy: RateLimitPolicy) =>
  consumeRateLimit(addressRateLimitKey(address), policy)

/** The rate-limit key of a request's source site (see sourceSiteOf). */
export const siteRateLimitKey = (site: string): string => `site:${site}`

/** The policy of a site's bucket: NETWORKS_PER_SITE times its networks' rate and burst. */
export const siteRateLimitPolicy = (policy: RateLimitPolicy): RateLimitPolicy => ({
  ratePerSecond: policy.ratePerSecond * NETWORKS_PER_SITE,
  burst: policy.burst * NETWORKS_PER_SITE,
})

/**
 * Takes one request of the token endpoints from its source site's bucket (siteRateLimitPolicy of the
 * network's `policy`: see sourceSiteOf); undefined for an address that has no site (IPv4), whose network's
 * bucket is all there is.
 */
export const consumeSiteRateLimit = (address: string, policy: RateLimitPolicy) => {
  const site = sourceSiteOf(address)
  return site === undefined
    ? Effect.succeed(undefined)
    : consumeRateLimit(siteRateLimitKey(site), siteRateLimitPolicy(policy))
}

/**
 * Takes one request of the token endpoints from the buckets of its source, all or none: its network's, then
 * (IPv6) its site's, asked only if the network's allowed it, so that one network spending its own bucket
 * leaves its site's alone; a request its site refuses (or whose site could not be asked) has its network's
 * cell given back. Answers each bucket asked, named as the RateLimit headers name them ("address", "site"),
 * in the order asked.
 */
// Left interruptible, as a request's other checks before its route are (a client going away, or a shutdown,
// must not wait on a database out of reach): a request interrupted between the two steps leaves its cell in
// its own network's bucket, and nobody else's.
export const consumeSourceRateLimits = (address: string, policy: RateLimitPolicy) =>
  Effect.gen(function* () {
    // The address read once, for both steps.
    const source = sourceOfAddress(address)
    const networkKey = networkRateLimitKey(source.network)
    const network = yield* consumeRateLimit(networkKey, policy)
    if (!network.allowed || source.site === undefined) return [["address", network]] as const
    const giveBack = giveBackRateLimitCell(networkKey, policy)
    const site = yield* Effect.tapError(
      consumeRateLimit(siteRateLimitKey(source.site), siteRateLimitPolicy(policy)),
      () => Effect.ignore(giveBack),
    )
    if (site.allowed)
      return [
        ["address", network],
        ["site", site],
      ] as const
    return [
      ["address", yield* giveBack],
      ["site", site],
    ] as const
  })

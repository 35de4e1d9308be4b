import { Context, Effect, Layer } from "effect"
import { RateLimiterMemory, type RateLimiterRes } from "rate-limiter-flexible"
import { NETWORKS_PER_SITE, sourceNetworkOf, sourceSiteOf } from "./address-rate-limit.js"

/** The window failed authentications are counted over. */
export const FAILED_AUTHENTICATIONS_WINDOW_SECONDS = 10

/**
 * The failed authentications (bearer tokens looked up and not found, wrong admin tokens) each source network
 * (see sourceNetworkOf) has made lately, in this process: once a network has made `perSecond` times the
 * window's seconds of them within a window, its credentials are no longer checked until the window ends. The
 * networks of one IPv6 site (see sourceSiteOf) have NETWORKS_PER_SITE times that together, so that a caller
 * holding a /48 cannot spread its guesses over 65,536 networks. Every unknown bearer token costs a database lookup, and a caller sending made-up tokens would otherwise
 * have the API run one per request. Kept in the process's memory, not in the database the partner limits
 * share: asking a shared store before each check would cost what the check costs. With N API processes a
 * network gets N times the allowance.
 */
export class FailedAuthentications extends Context.Tag("@points/infrastructure/FailedAuthentications")<
  FailedAuthentications,
  {
    /** Seconds until the network (and site) of `address` may have credentials checked again; 0 when it may now. */
    readonly refusedFor: (address: string) => Effect.Effect<number>
    /**
     * Counts one failed authentication against the network of `address` before its check runs (its outcome
     * might never be known: its request interrupted), and answers 0; or, for a network past its limit,
     * answers the seconds until it may try again, and nothing is to be checked. Counting and deciding are
     * one step, so requests arriving together (pipelined on one connection) cannot all pass before any is
     * counted. `forgive` gives the failure back when the check succeeds.
     */
    readonly charge: (address: string) => Effect.Effect<number>
    /** Gives back one failure counted by `charge`: the check it was taken for did not fail. */
    readonly forgive: (address: string) => Effect.Effect<void>
  }
>() {
  /**
   * At most `perSecond` failures a second per source network (NETWORKS_PER_SITE times that per IPv6 site),
   * counted over 10-second windows; 0: no limit.
   */
  static readonly layer = (perSecond: number) =>
    Layer.sync(FailedAuthentications, () => {
      if (perSecond === 0) {
        return {
          refusedFor: () => Effect.succeed(0),
          charge: () => Effect.succeed(0),
          forgive: () => Effect.void,
        }
      }
      const windowOf = (allowance: number) =>
        new RateLimiterMemory({
          points: allowance * FAILED_AUTHENTICATIONS_WINDOW_SECONDS,
          duration: FAILED_AUTHENTICATIONS_WINDOW_SECONDS,
        })
      // Each address counts against its network, and an IPv6 one against its site as well (sourceSiteOf).
      const networks = windowOf(perSecond)
      const sites = windowOf(perSecond * NETWORKS_PER_SITE)
      const countersOf = (address: string) => {
        const site = sourceSiteOf(address)
        const network = [networks, sourceNetworkOf(address)] as const
        return site === undefined ? [network] : [network, [sites, site] as const]
      }
      const secondsOf = (msBeforeNext: number) => Math.max(1, Math.ceil(msBeforeNext / 1000))
      return {
        refusedFor: (address) =>
          Effect.promise(async () => {
            let wait = 0
            for (const [limiter, key] of countersOf(address)) {
              const counted = await limiter.get(key)
              if (counted !== null && counted.remainingPoints <= 0) {
                wait = Math.max(wait, secondsOf(counted.msBeforeNext))
              }
            }
            return wait
          }),
        // The library counts and decides in `consume` synchronously, and rejects with the count past the
        // limit. A failure the network refuses is not counted against the site, so that one network spending
        // its own allowance leaves the other networks of its site theirs.
        charge: (address) =>
          Effect.promise(async () => {
            for (const [limiter, key] of countersOf(address)) {
              const refusal = await limiter.consume(key).then(
                () => 0,
                (refused: RateLimiterRes) => secondsOf(refused.msBeforeNext),
              )
              if (refusal > 0) return refusal
            }
            return 0
          }),
        // Only within the window the failure was counted in: a new window's count would go below zero.
        forgive: (address) =>
          Effect.promise(async () => {
            for (const [limiter, key] of countersOf(address)) {
              if ((await limiter.get(key)) !== null) await limiter.reward(key)
            }
          }),
      }
    })
}

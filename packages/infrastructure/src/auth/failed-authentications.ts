import { Context, Effect, Layer } from "effect"
import { NETWORKS_PER_SITE, sourceOfAddress } from "./address-rate-limit.js"

/** The window failed authentications are counted over. */
export const FAILED_AUTHENTICATIONS_WINDOW_SECONDS = 10

/** What counting a failed authentication came to: refused (nothing to check), or counted and revocable. */
export type FailureCharge =
  | { readonly _tag: "Refused"; readonly retryAfterSeconds: number }
  | {
      readonly _tag: "Charged"
      /** Gives the failure back (the check did not fail); nothing once its window has ended. */
      readonly forgive: Effect.Effect<void>
    }

/**
 * The failed authentications (bearer tokens looked up and not found, wrong admin tokens) each source network
 * (see sourceNetworkOf) has made lately, in this process: once a network has made `perSecond` times the
 * window's seconds of them within a window, its credentials are no longer checked until the window ends. The
 * networks of one IPv6 site (see sourceSiteOf) share their windows and have NETWORKS_PER_SITE times that
 * together, so that a caller holding a /48 cannot spread its guesses over 65,536 networks, and one network
 * spending its own allowance leaves the others of its site theirs. Every unknown bearer token costs a
 * database lookup, and a caller sending made-up tokens would otherwise have the API run one per request. Kept
 * in the process's memory, not in the database the partner limits share: asking a shared store before each
 * check would cost what the check costs. With N API processes a network gets N times the allowance.
 */
export class FailedAuthentications extends Context.Tag("@points/infrastructure/FailedAuthentications")<
  FailedAuthentications,
  {
    /** Seconds until the network (and site) of `address` may have credentials checked again; 0 when it may now. */
    readonly refusedFor: (address: string) => Effect.Effect<number>
    /**
     * Counts one failed authentication against the network (and site) of `address` before its check runs
     * (its outcome might never be known: its request interrupted); or, past a limit, refuses it, counting
     * nothing: nothing is to be checked. Counting and deciding are one step, so requests arriving together
     * (pipelined on one connection) cannot all pass before any is counted. The charge's `forgive` gives the
     * failure back when the check succeeds.
     */
    readonly charge: (address: string) => Effect.Effect<FailureCharge>
  }
>() {
  /**
   * At most `perSecond` failures a second per source network (NETWORKS_PER_SITE times that per IPv6 site),
   * counted over 10-second windows; 0: no limit.
   */
  static readonly layer = (perSecond: number) =>
    Layer.sync(FailedAuthentications, () => {
      if (perSecond === 0) {
        const charged: FailureCharge = { _tag: "Charged", forgive: Effect.void }
        return { refusedFor: () => Effect.succeed(0), charge: () => Effect.succeed(charged) }
      }
      const windows = failureWindows(perSecond * FAILED_AUTHENTICATIONS_WINDOW_SECONDS)
      return {
        refusedFor: (address) => Effect.sync(() => windows.refusedFor(address, Date.now())),
        charge: (address) => Effect.sync(() => windows.charge(address, Date.now())),
      }
    })
}

// One window of a group of networks (an IPv6 site's, or an IPv4 address alone): its failures in all, and
// each network's. A network's window is its group's, so that no network can span two of its own windows
// within one of its site's and so spend its site's whole allowance.
interface FailureWindow {
  readonly endsAt: number
  total: number
  readonly networks: Map<string, number>
}

/**
 * The windows FailedAuthentications keeps (internal; exported for its tests): each network allowed
 * `allowance` failures a window, a site NETWORKS_PER_SITE times that.
 */
// Written by hand rather than with a rate-limit library: the two tiers must be decided and counted together,
// all or nothing, and a failure given back only to the window it was counted in. The map is kept in the
// order the windows began, and every window lasts as long, so the ended ones are at its head: each call drops
// them from there, and the map holds only the windows that have not ended (the clock is made monotonic so
// that a wall clock stepped back keeps that order).
export const failureWindows = (allowance: number) => {
  const windows = new Map<string, FailureWindow>()
  let lastNow = Number.NEGATIVE_INFINITY
  const groupOf = (address: string) => {
    const { network, site } = sourceOfAddress(address)
    return site === undefined
      ? { network, group: network, groupAllowance: allowance }
      : { network, group: site, groupAllowance: allowance * NETWORKS_PER_SITE }
  }
  // The windows that have ended dropped, the current one of `group` if it has one.
  const current = (group: string, now: number) => {
    for (const [ended, window] of windows) {
      if (window.endsAt > now) break
      windows.delete(ended)
    }
    return windows.get(group)
  }
  const monotonic = (now: number) => {
    lastNow = Math.max(lastNow, now)
    return lastNow
  }
  const waitOf = (window: FailureWindow, now: number) => Math.max(1, Math.ceil((window.endsAt - now) / 1000))
  const isFull = (window: FailureWindow, network: string, groupAllowance: number) =>
    window.total >= groupAllowance || (window.networks.get(network) ?? 0) >= allowance
  return {
    /** How many groups' windows are kept now: those that had not ended at the last call. */
    held: () => windows.size,
    refusedFor: (address: string, at: number) => {
      const now = monotonic(at)
      const { network, group, groupAllowance } = groupOf(address)
      const window = current(group, now)
      return window !== undefined && isFull(window, network, groupAllowance) ? waitOf(window, now) : 0
    },
    charge: (address: string, at: number): FailureCharge => {
      const now = monotonic(at)
      const { network, group, groupAllowance } = groupOf(address)
      let window = current(group, now)
      if (window !== undefined && isFull(window, network, groupAllowance)) {
        return { _tag: "Refused", retryAfterSeconds: waitOf(window, now) }
      }
      if (window === undefined) {
        window = { endsAt: now + FAILED_AUTHENTICATIONS_WINDOW_SECONDS * 1000, total: 0, networks: new Map() }
        windows.set(group, window)
      }
      const counted = window
      counted.total += 1
      counted.networks.set(network, (counted.networks.get(network) ?? 0) + 1)
      let forgiven = false
      return {
        _tag: "Charged",
        // To the window it was counted in, whatever came since: once that has ended (replaced or not), a
        // count given back to it changes nothing, and a later window's count is never touched. Once only.
        forgive: Effect.sync(() => {
          if (forgiven) return
          forgiven = true
          counted.total -= 1
          const left = (counted.networks.get(network) ?? 0) - 1
          if (left > 0) counted.networks.set(network, left)
          else counted.networks.delete(network)
        }),
      }
    },
  }
}

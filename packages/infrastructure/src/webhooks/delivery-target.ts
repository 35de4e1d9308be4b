import type { LookupAddress } from "node:dns"
import type { LookupFunction } from "node:net"
import { WebhookEndpoint } from "@points/domain"
import { type HostResolver, systemLookup } from "./host-lookup.js"

/** Why a delivery was not sent to its endpoint's address: private, loopback or link-local. */
export class PrivateTargetRefused extends Error {
  constructor(readonly target: string) {
    super(`refused: ${target} is a private, loopback or link-local address`)
    this.name = "PrivateTargetRefused"
  }
}

const isPrivateAddress = (address: LookupAddress) =>
  WebhookEndpoint.isPrivateHost(address.family === 6 ? `[${address.address}]` : address.address)

/**
 * A `lookup` for node's http(s) client that resolves the host and refuses it when any of its addresses is
 * private, loopback or link-local (the domain's address policy), unless private targets are allowed. The
 * socket then connects to the address that was checked: there is no second resolution a DNS rebinding could
 * answer differently. Literal IP hosts never reach a lookup; `literalTargetProblem` checks those. Registration
 * checks a name with it too (`resolvedTargetRefusal`).
 */
export const checkedLookup =
  (allowPrivateTargets: boolean, resolve: HostResolver = systemLookup): LookupFunction =>
  (hostname, options, callback) => {
    resolve(hostname, { family: options.family }, (error, addresses) => {
      const reply = callback as (
        error: NodeJS.ErrnoException | null,
        address: string | ReadonlyArray<LookupAddress>,
        family?: number,
      ) => void
      if (error !== null) return reply(error, "")
      const refused = allowPrivateTargets ? undefined : addresses.find(isPrivateAddress)
      // The name only: the address it resolved to is the platform's network, not the partner's to learn.
      if (refused !== undefined) return reply(new PrivateTargetRefused(hostname), "")
      const first = addresses[0]
      if (first === undefined) return reply(new Error(`${hostname} has no address`), "")
      return options.all === true ? reply(null, addresses) : reply(null, first.address, first.family)
    })
  }

/** The refusal of a URL whose host is itself a private literal (or `localhost`), or null. */
export const literalTargetProblem = (url: URL, allowPrivateTargets: boolean): PrivateTargetRefused | null =>
  !allowPrivateTargets && WebhookEndpoint.isPrivateHost(url.hostname)
    ? new PrivateTargetRefused(url.hostname)
    : null

import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns"
import { Context } from "effect"

/** Resolves a host name to every address it has, as `dns.lookup` with `all: true` does. */
export type HostResolver = (
  hostname: string,
  options: { readonly family: LookupOptions["family"] },
  callback: (error: NodeJS.ErrnoException | null, addresses: ReadonlyArray<LookupAddress>) => void,
) => void

/** The system's resolver (`dns.lookup`: /etc/hosts, then DNS), as the platform's HTTP client uses it. */
export const systemLookup: HostResolver = (hostname, options, callback) =>
  dnsLookup(hostname, { all: true, family: options.family ?? 0 }, callback)

/**
 * How webhook targets' host names are resolved, at registration and at delivery: the system's resolver unless
 * a test provides another (names that resolve to private addresses without touching /etc/hosts).
 */
export class HostLookup extends Context.Reference<HostLookup>()("@points/infrastructure/HostLookup", {
  defaultValue: (): HostResolver => systemLookup,
}) {}

import { Duration, Effect, identity } from "effect"
import { checkedLookup, PrivateTargetRefused } from "./delivery-target.js"
import { HostLookup } from "./host-lookup.js"

/**
 * How long registration waits for a target's name to resolve. A lookup cannot be cancelled, only no longer
 * waited for; past this the name is accepted unchecked, as one that does not resolve is.
 */
export const TARGET_LOOKUP_TIMEOUT = Duration.seconds(2)

/**
 * The refusal of an endpoint address whose host resolves to a private, loopback or link-local address (any
 * of its addresses), by the lookup (HostLookup) and the rules deliveries use (`checkedLookup`); null when
 * private targets are allowed, the URL does not parse, or every address is allowed. A name that does not
 * resolve (not yet in DNS: a partner may register first) or not within TARGET_LOOKUP_TIMEOUT is accepted:
 * every delivery resolves and checks it again, which is where the rule is enforced.
 */
export const resolvedTargetRefusal = (
  url: string,
  allowPrivateTargets: boolean,
): Effect.Effect<PrivateTargetRefused | null> =>
  Effect.gen(function* () {
    if (allowPrivateTargets || !URL.canParse(url)) return null
    // An IPv6 literal is bracketed in a URL, not in a lookup (which answers a literal with itself).
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1")
    const lookup = checkedLookup(false, yield* HostLookup)
    return yield* Effect.async<PrivateTargetRefused | null>((resume) =>
      lookup(host, { all: true }, (error) =>
        resume(Effect.succeed(error instanceof PrivateTargetRefused ? error : null)),
      ),
    ).pipe(
      Effect.timeoutTo({ duration: TARGET_LOOKUP_TIMEOUT, onSuccess: identity, onTimeout: () => null }),
      Effect.withSpan("webhooks.resolveTarget"),
    )
  })

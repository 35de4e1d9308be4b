import { Clock, Effect, Option, SynchronizedRef } from "effect"

/** The access token object of Create Token, as far as the cache needs it. */
export interface IssuedToken {
  readonly access_token: string
  /** Unix seconds at which the token expires. */
  readonly expires_at: number
  /** Its lifetime in seconds. */
  readonly expires_in: number
}

/** A cache of one access token: obtained on first use, renewed before it expires, dropped when refused. */
export interface AccessTokens<E> {
  /** A token valid now (fetched when none is cached or the cached one is due for renewal). */
  readonly current: Effect.Effect<string, E>
  /** Forgets `token` (the server refused it), so the next `current` fetches a new one. */
  readonly invalidate: (token: string) => Effect.Effect<void>
}

interface Cached {
  readonly token: string
  /** Epoch milliseconds from which the token is renewed instead of used. */
  readonly renewAt: number
}

/**
 * Caches the token `fetch` obtains. It is renewed `renewBeforeMillis` before it expires (at most half its
 * lifetime before, so short-lived tokens are still used). The expiry is the earlier of `expires_at` and
 * `expires_in` after receipt, so a clock skew between client and server cannot make it look longer-lived.
 * Concurrent callers share one fetch.
 */
export const makeAccessTokens = <E>(
  fetch: Effect.Effect<IssuedToken, E>,
  renewBeforeMillis: number,
): Effect.Effect<AccessTokens<E>> =>
  Effect.map(SynchronizedRef.make(Option.none<Cached>()), (ref) => ({
    current: SynchronizedRef.modifyEffect(ref, (cached) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (Option.isSome(cached) && now < cached.value.renewAt) return [cached.value.token, cached] as const
        const issued = yield* fetch
        const receivedAt = yield* Clock.currentTimeMillis
        const expiresAt = Math.min(issued.expires_at * 1000, receivedAt + issued.expires_in * 1000)
        const lifetime = Math.max(0, expiresAt - receivedAt)
        const renewAt = expiresAt - Math.min(renewBeforeMillis, lifetime / 2)
        // A token that is already due is still used once: it was just issued for this request.
        return [issued.access_token, Option.some({ token: issued.access_token, renewAt })] as const
      }),
    ),
    invalidate: (token) =>
      SynchronizedRef.update(ref, (cached) =>
        Option.isSome(cached) && cached.value.token === token ? Option.none() : cached,
      ),
  }))

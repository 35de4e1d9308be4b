import { Cause, Clock, Deferred, Effect, Option, Ref } from "effect"

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
  /** The token cached now, if any, without fetching one. */
  readonly held: Effect.Effect<Option.Option<string>>
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
 * Concurrent callers share one fetch and its outcome, a failure included: callers that queued behind a
 * failing fetch fail with it instead of each running (and retrying) a fetch of their own.
 */
export const makeAccessTokens = <E>(
  fetch: Effect.Effect<IssuedToken, E>,
  renewBeforeMillis: number,
): Effect.Effect<AccessTokens<E>> =>
  Effect.gen(function* () {
    const cache = yield* Ref.make(Option.none<Cached>())
    const inFlight = yield* Ref.make(Option.none<Deferred.Deferred<string, E>>())

    const fetchAndCache = Effect.gen(function* () {
      const issued = yield* fetch
      const receivedAt = yield* Clock.currentTimeMillis
      const expiresAt = Math.min(issued.expires_at * 1000, receivedAt + issued.expires_in * 1000)
      const lifetime = Math.max(0, expiresAt - receivedAt)
      const renewAt = expiresAt - Math.min(renewBeforeMillis, lifetime / 2)
      // A token that is already due is still used once: it was just issued for this request.
      yield* Ref.set(cache, Option.some({ token: issued.access_token, renewAt }))
      return issued.access_token
    })

    // The first caller fetches; the others await its outcome. A fetch whose caller was interrupted ends the
    // wait of the others, who then try again (one of them fetching).
    const shared: Effect.Effect<string, E> = Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const mine = yield* Deferred.make<string, E>()
        const running: Option.Option<Deferred.Deferred<string, E>> = yield* Ref.modify(
          inFlight,
          (current: Option.Option<Deferred.Deferred<string, E>>): [typeof current, typeof current] =>
            Option.isSome(current) ? [current, current] : [Option.none(), Option.some(mine)],
        )
        if (Option.isSome(running)) return yield* restore(Deferred.await(running.value))
        const exit = yield* Effect.exit(restore(fetchAndCache))
        yield* Ref.set(inFlight, Option.none())
        yield* Deferred.done(mine, exit)
        return yield* exit
      }),
    ).pipe(
      // Outside the mask: a caller that is itself interrupted runs no handler; one whose fetcher was, retries.
      Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? current : Effect.failCause(cause))),
    )

    const current: Effect.Effect<string, E> = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const cached = yield* Ref.get(cache)
      if (Option.isSome(cached) && now < cached.value.renewAt) return cached.value.token
      return yield* shared
    })

    return {
      current,
      held: Effect.map(
        Ref.get(cache),
        Option.map((cached) => cached.token),
      ),
      invalidate: (token: string) =>
        Ref.update(cache, (cached) =>
          Option.isSome(cached) && cached.value.token === token ? Option.none() : cached,
        ),
    }
  })

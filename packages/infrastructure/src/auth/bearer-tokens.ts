import { SqlClient, type SqlError } from "@effect/sql"
import { InvalidToken } from "@points/domain"
import { Cache, Context, Duration, Effect, Exit, Layer, Option, Queue } from "effect"
import { LogListener } from "../consumers/log-listener.js"
import { accessTokenHash, isAccessTokenShaped } from "./access-token.js"
import { type BearerLookup, lookupBearer, type Principal } from "./authenticate-bearer.js"
import { REVOKED_TOKEN_PREFIX } from "./revoked-tokens-channel.js"

/** How the bearer tokens a process has checked are remembered. */
export interface BearerTokenCacheOptions {
  /** How long a valid token is remembered; 0 looks every token up on every request. */
  readonly ttlSeconds: number
  /** At most this many tokens are remembered (least recently used go first). */
  readonly capacity: number
}

/**
 * Bearer authentication for every request, with the valid tokens a process has checked remembered briefly
 * (by their SHA-256, never the token itself), so that a partner's requests do not each pay a lookup. Every
 * revocation NOTIFYs the revoked tokens' hashes at its commit, and each process forgets them when it hears
 * (milliseconds); should its LISTEN connection be lost, the cache's lifetime still bounds how long a revoked
 * token works there, and everything remembered is forgotten once it hears again. Invalid tokens are never
 * remembered: each is looked up again. A lookup that was under way when its token's revocation was heard (or
 * everything was forgotten) may have read the token before the revocation committed: its answer is not
 * trusted, and the token is looked up again; other tokens' answers stay trusted.
 */
export class BearerTokens extends Context.Tag("@points/infrastructure/BearerTokens")<
  BearerTokens,
  {
    readonly authenticate: (token: string) => Effect.Effect<Principal, InvalidToken | SqlError.SqlError>
    /**
     * The token's principal if this process holds the token as valid now, without looking anything up:
     * none for a token not checked lately, being checked, invalid, or forgotten since.
     */
    readonly remembered: (token: string) => Effect.Effect<Option.Option<Principal>>
    /** Forgets one token (it was revoked here). */
    readonly forget: (token: string) => Effect.Effect<void>
    /** Forgets every token (a credential was revoked here: its tokens are not known by value). */
    readonly forgetAll: Effect.Effect<void>
  }
>() {
  /**
   * Looks tokens up in the database, remembering valid ones for `ttlSeconds` (never past their expiry) unless
   * a revocation is heard first; listens for revocations for as long as the layer lives.
   */
  static readonly layer = (
    options: BearerTokenCacheOptions,
    /** How a token is looked up by its hash (the database; tests slow it down). */
    lookupBy: (
      tokenHash: string,
    ) => Effect.Effect<BearerLookup, InvalidToken | SqlError.SqlError, SqlClient.SqlClient> = lookupBearer,
  ) =>
    Layer.scoped(
      BearerTokens,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // Counts forgettings, and when each token was last forgotten (the count then): a lookup stamped with an
        // older count than its token's last forgetting may have read the token before its revocation committed
        // and come back after the revocation was heard, and is not trusted. Forgetting one token leaves every
        // other token's answer trusted, so that a revocation (or a revocation request for a made-up token)
        // does not make the process look up every token it holds again. At most `capacity` tokens' times are
        // kept: past that, everything stamped before is distrusted at once, as by forgetAll.
        let forgettings = 0
        let everythingForgottenAt = 0
        const forgottenAt = new Map<string, number>()
        const trusted = (hash: string, stamp: number) =>
          stamp >= everythingForgottenAt && stamp >= (forgottenAt.get(hash) ?? 0)
        // Uninterruptible: a lookup is shared by every request waiting on it, and an interrupted query would
        // have its cancel land on the connection's next statement (see the package README).
        const lookup = (hash: string) =>
          Effect.suspend(() => {
            const stamp = forgettings
            return Effect.map(
              lookupBy(hash).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.uninterruptible),
              (found) => ({ ...found, stamp }),
            )
          })
        const ttlMs = options.ttlSeconds * 1000
        const cache = yield* Cache.makeWith({
          capacity: options.capacity,
          lookup,
          timeToLive: (exit) =>
            Exit.isSuccess(exit) ? Duration.millis(Math.max(0, Math.min(ttlMs, exit.value.expiresInMs))) : 0,
        })
        const forget = (hash: string) =>
          Effect.suspend(() => {
            forgettings++
            forgottenAt.delete(hash)
            forgottenAt.set(hash, forgettings)
            if (forgottenAt.size > options.capacity) {
              everythingForgottenAt = forgettings
              forgottenAt.clear()
            }
            return cache.invalidate(hash)
          })
        const forgetAll = Effect.suspend(() => {
          forgettings++
          everythingForgottenAt = forgettings
          forgottenAt.clear()
          return cache.invalidateAll
        })
        // A remembered answer from before its token's latest forgetting is looked up again (once more at most,
        // then without the cache).
        const remembered = (
          hash: string,
          again = true,
        ): Effect.Effect<BearerLookup, InvalidToken | SqlError.SqlError> =>
          Effect.flatMap(cache.get(hash), (found) =>
            trusted(hash, found.stamp)
              ? Effect.succeed(found)
              : again
                ? Effect.zipRight(cache.invalidate(hash), remembered(hash, false))
                : lookup(hash),
          )
        if (ttlMs > 0) {
          const heard = yield* (yield* LogListener).subscribeHeard
          yield* Queue.take(heard).pipe(
            Effect.flatMap((said) =>
              // Revocations may have gone unheard while the listener was deaf: nothing remembered is trusted.
              said === "hearing"
                ? forgetAll
                : said.payload.startsWith(REVOKED_TOKEN_PREFIX)
                  ? forget(said.payload.slice(REVOKED_TOKEN_PREFIX.length))
                  : Effect.void,
            ),
            Effect.forever,
            Effect.forkScoped,
          )
        }
        const authenticate = (token: string) =>
          isAccessTokenShaped(token)
            ? Effect.map(
                ttlMs === 0 ? lookup(accessTokenHash(token)) : remembered(accessTokenHash(token)),
                (found) => found.principal,
              )
            : Effect.fail(new InvalidToken({ reason: "malformed" }))
        // Asked only of a token the cache has an entry for: Effect's Cache records an access even for a key it
        // does not hold, in a list that is trimmed only once the cache is over capacity, so asking about
        // every unknown token (a network refused before any lookup, its entries never made) would grow it
        // without bound.
        const rememberedNow = (token: string): Effect.Effect<Option.Option<Principal>> => {
          if (ttlMs === 0 || !isAccessTokenShaped(token)) return Effect.succeedNone
          const hash = accessTokenHash(token)
          return Effect.flatMap(cache.contains(hash), (held) =>
            held
              ? cache.getOptionComplete(hash).pipe(
                  Effect.map(
                    Option.filterMap((found) =>
                      trusted(hash, found.stamp) ? Option.some(found.principal) : Option.none(),
                    ),
                  ),
                  Effect.orElseSucceed(() => Option.none<Principal>()),
                )
              : Effect.succeedNone,
          )
        }
        return {
          authenticate,
          remembered: rememberedNow,
          forget: (token: string) => forget(accessTokenHash(token)),
          forgetAll,
        }
      }),
    )
}

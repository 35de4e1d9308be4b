import { SqlClient, type SqlError } from "@effect/sql"
import { InvalidToken } from "@points/domain"
import { Cache, Context, Duration, Effect, Exit, Layer, Queue } from "effect"
import { LogListener } from "../consumers/log-listener.js"
import { accessTokenHash, isAccessTokenShaped } from "./access-token.js"
import { lookupBearer, type Principal } from "./authenticate-bearer.js"
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
 * remembered: each is looked up again.
 */
export class BearerTokens extends Context.Tag("@points/infrastructure/BearerTokens")<
  BearerTokens,
  {
    readonly authenticate: (token: string) => Effect.Effect<Principal, InvalidToken | SqlError.SqlError>
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
  static readonly layer = (options: BearerTokenCacheOptions) =>
    Layer.scoped(
      BearerTokens,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // Uninterruptible: a lookup is shared by every request waiting on it, and an interrupted query would
        // have its cancel land on the connection's next statement (see the package README).
        const lookup = (hash: string) =>
          lookupBearer(hash).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.uninterruptible)
        const ttlMs = options.ttlSeconds * 1000
        const cache = yield* Cache.makeWith({
          capacity: options.capacity,
          lookup,
          timeToLive: (exit) =>
            Exit.isSuccess(exit) ? Duration.millis(Math.max(0, Math.min(ttlMs, exit.value.expiresInMs))) : 0,
        })
        if (ttlMs > 0) {
          const heard = yield* (yield* LogListener).subscribeHeard
          yield* Queue.take(heard).pipe(
            Effect.flatMap((said) =>
              // Revocations may have gone unheard while the listener was deaf: nothing remembered is trusted.
              said === "hearing"
                ? cache.invalidateAll
                : said.payload.startsWith(REVOKED_TOKEN_PREFIX)
                  ? cache.invalidate(said.payload.slice(REVOKED_TOKEN_PREFIX.length))
                  : Effect.void,
            ),
            Effect.forever,
            Effect.forkScoped,
          )
        }
        const authenticate = (token: string) =>
          isAccessTokenShaped(token)
            ? Effect.map(
                ttlMs === 0 ? lookup(accessTokenHash(token)) : cache.get(accessTokenHash(token)),
                (found) => found.principal,
              )
            : Effect.fail(new InvalidToken({ reason: "malformed" }))
        return {
          authenticate,
          forget: (token: string) => cache.invalidate(accessTokenHash(token)),
          forgetAll: cache.invalidateAll,
        }
      }),
    )
}

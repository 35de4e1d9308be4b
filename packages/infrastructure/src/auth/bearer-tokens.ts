import { SqlClient, type SqlError } from "@effect/sql"
import { InvalidToken } from "@points/domain"
import { Clock, Context, Deferred, Effect, Exit, FiberId, Layer, Queue } from "effect"
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

// A lookup's answer with the count of forgettings when it began (see `trusted`).
type Stamped = BearerLookup & { readonly stamp: number }

/**
 * A bearer token as a process holds it: valid now (its principal, nothing looked up), or not held, with the
 * lookup that tells, for the caller to run once it has done what must come first (counting the lookup as a
 * possible failure, say).
 */
export type HeldToken =
  | { readonly _tag: "Held"; readonly principal: Principal }
  | { readonly _tag: "Unheld"; readonly lookUp: Effect.Effect<Principal, InvalidToken | SqlError.SqlError> }

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
    /** The token's principal: held, or else looked up (and then held, if valid and the cache keeps tokens). */
    readonly authenticate: (token: string) => Effect.Effect<Principal, InvalidToken | SqlError.SqlError>
    /**
     * Whether this process holds the token as valid now, without looking anything up: Unheld for a token not
     * checked lately, being checked, invalid, or forgotten since, with the lookup to run for it.
     */
    readonly held: (token: string) => Effect.Effect<HeldToken>
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
        // Uninterruptible: an interrupted query would have its cancel land on the connection's next statement
        // (see the package README).
        const lookup = (hash: string): Effect.Effect<Stamped, InvalidToken | SqlError.SqlError> =>
          Effect.suspend(() => {
            const stamp = forgettings
            return Effect.map(
              lookupBy(hash).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.uninterruptible),
              (found) => ({ ...found, stamp }),
            )
          })
        const ttlMs = options.ttlSeconds * 1000
        // The valid tokens held, by hash, in the order they were last used (a Map keeps insertion order: a use
        // moves its entry to the end, and the first entry is the one to drop past `capacity`). Written by hand
        // rather than with Effect's Cache, whose list of accesses grows by an entry at every lookup of a key
        // it held before (each expiry of a token in use, each made-up token sent again) and is trimmed only
        // once the cache is over capacity: a process with a few busy tokens grew without bound.
        const heldByHash = new Map<string, { readonly found: Stamped; readonly until: number }>()
        // The lookups under way, by hash: every request for the token waits on the one lookup. Each runs in a
        // fiber of its own, so that a request that goes away (its fiber interrupted) neither interrupts it
        // nor fails the others waiting on it.
        const underWay = new Map<string, Deferred.Deferred<Stamped, InvalidToken | SqlError.SqlError>>()
        const scope = yield* Effect.scope
        const heldNow = (hash: string, now: number): Stamped | undefined => {
          const entry = heldByHash.get(hash)
          if (entry === undefined) return undefined
          heldByHash.delete(hash)
          if (entry.until <= now || !trusted(hash, entry.found.stamp)) return undefined
          heldByHash.set(hash, entry)
          return entry.found
        }
        // Kept only if no forgetting of the token came while it was looked up, and never past its expiry.
        const keep = (hash: string, found: Stamped, now: number) => {
          const lifetime = Math.min(ttlMs, found.expiresInMs)
          if (lifetime <= 0 || !trusted(hash, found.stamp)) return
          heldByHash.delete(hash)
          heldByHash.set(hash, { found, until: now + lifetime })
          if (heldByHash.size > options.capacity) {
            const oldest = heldByHash.keys().next()
            if (oldest.done !== true) heldByHash.delete(oldest.value)
          }
        }
        const sharedLookup = (hash: string) =>
          Effect.suspend(() => {
            const running = underWay.get(hash)
            if (running !== undefined) return Deferred.await(running)
            const done = Deferred.unsafeMake<Stamped, InvalidToken | SqlError.SqlError>(FiberId.none)
            underWay.set(hash, done)
            const forgetUnderWay = () => {
              if (underWay.get(hash) === done) underWay.delete(hash)
            }
            return Effect.zipRight(
              lookup(hash).pipe(
                Effect.exit,
                Effect.flatMap((exit) =>
                  Effect.flatMap(Clock.currentTimeMillis, (now) => {
                    forgetUnderWay()
                    if (Exit.isSuccess(exit)) keep(hash, exit.value, now)
                    return Deferred.done(done, exit)
                  }),
                ),
                // Ended before it began (the layer closing): its waiters are told, not left waiting.
                Effect.onInterrupt(() =>
                  Effect.zipRight(Effect.sync(forgetUnderWay), Deferred.interrupt(done)),
                ),
                Effect.forkIn(scope),
              ),
              Deferred.await(done),
            )
          })
        const forget = (hash: string) =>
          Effect.sync(() => {
            forgettings++
            forgottenAt.delete(hash)
            forgottenAt.set(hash, forgettings)
            if (forgottenAt.size > options.capacity) {
              everythingForgottenAt = forgettings
              forgottenAt.clear()
            }
            heldByHash.delete(hash)
          })
        const forgetAll = Effect.sync(() => {
          forgettings++
          everythingForgottenAt = forgettings
          forgottenAt.clear()
          heldByHash.clear()
        })
        // A token held is answered from memory; any other is looked up (shared with the requests already
        // waiting on its lookup). An answer from a lookup that a forgetting of its token overtook may predate
        // the revocation: the token is looked up once more, on its own, after the forgetting.
        const heldOrLookedUp = (hash: string): Effect.Effect<Stamped, InvalidToken | SqlError.SqlError> =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const found = heldNow(hash, now)
            if (found !== undefined) return Effect.succeed(found)
            return Effect.flatMap(sharedLookup(hash), (looked) =>
              trusted(hash, looked.stamp) ? Effect.succeed(looked) : lookup(hash),
            )
          })
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
        const held = (token: string): Effect.Effect<HeldToken> => {
          if (!isAccessTokenShaped(token)) {
            return Effect.succeed({
              _tag: "Unheld",
              lookUp: Effect.fail(new InvalidToken({ reason: "malformed" })),
            })
          }
          // Nothing is held without a lifetime: the token is hashed only if its lookup runs.
          if (ttlMs === 0) {
            return Effect.succeed({
              _tag: "Unheld",
              lookUp: Effect.suspend(() =>
                Effect.map(lookup(accessTokenHash(token)), (found) => found.principal),
              ),
            })
          }
          const hash = accessTokenHash(token)
          const lookUp = Effect.map(heldOrLookedUp(hash), (found) => found.principal)
          return Effect.map(Clock.currentTimeMillis, (now): HeldToken => {
            const found = heldNow(hash, now)
            return found === undefined
              ? { _tag: "Unheld", lookUp }
              : { _tag: "Held", principal: found.principal }
          })
        }
        const authenticate = (token: string) =>
          Effect.flatMap(held(token), (found) =>
            found._tag === "Held" ? Effect.succeed(found.principal) : found.lookUp,
          )
        return {
          authenticate,
          held,
          forget: (token: string) => forget(accessTokenHash(token)),
          forgetAll,
        }
      }),
    )
}

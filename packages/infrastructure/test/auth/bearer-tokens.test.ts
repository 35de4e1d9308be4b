import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import {
  accessTokenHash,
  type BearerTokens,
  issueToken,
  lookupBearer,
  revokeCredential,
  revokeToken,
} from "../../src/index.js"
import { serviceDatabase } from "../services/service-fixtures.js"
import { bearerTokensWith, heldPrincipal, invalidToken, newClient, ttl } from "./auth-fixtures.js"

/** A process's remembered tokens: a fresh cache with this lifetime, built on the test's database. */
const processWith = (ttlSeconds: number) => bearerTokensWith({ ttlSeconds, capacity: 100 })

/** Polls until the token is refused; fails after `seconds`. */
const refusedWithin = (tokens: BearerTokens["Type"], token: string, seconds: number) =>
  Effect.gen(function* () {
    const deadline = Date.now() + seconds * 1000
    for (;;) {
      const refused = yield* Effect.either(tokens.authenticate(token))
      if (refused._tag === "Left") return { error: refused.left, at: Date.now() }
      if (Date.now() > deadline) return yield* Effect.die(new Error(`still accepted after ${seconds} s`))
      yield* Effect.sleep("50 millis")
    }
  })

layer(serviceDatabase(), { excludeTestServices: true })("BearerTokens", (it) => {
  it.scoped(
    "forgets a token revoked elsewhere as soon as the revocation commits, not when its entry ends",
    () =>
      Effect.gen(function* () {
        const { partnerId, issued, credentials } = yield* newClient
        const token = yield* issueToken(credentials, ttl)
        const other = yield* issueToken(credentials, ttl)
        const tokens = yield* processWith(60)
        yield* tokens.authenticate(token.access_token)
        yield* tokens.authenticate(other.access_token)
        // Revoked through another process (OAuth revocation): heard through the database, well within 60 s.
        yield* revokeToken({ ...credentials, token: token.access_token })
        const revokedAt = Date.now()
        // Bounds far below the cache's 60 s, with room for a slow machine.
        const refused = yield* refusedWithin(tokens, token.access_token, 20)
        invalidToken("revoked")(refused.error)
        expect(refused.at - revokedAt).toBeLessThan(10_000)
        // The credential revoked (admin API or CLI): every token it held, at its commit.
        yield* revokeCredential(partnerId, issued.client_id)
        const credentialRevokedAt = Date.now()
        const otherRefused = yield* refusedWithin(tokens, other.access_token, 20)
        invalidToken("revoked")(otherRefused.error)
        expect(otherRefused.at - credentialRevokedAt).toBeLessThan(10_000)
      }),
  )

  it.scoped("does not remember a lookup that read the token before a revocation heard meanwhile", () =>
    Effect.gen(function* () {
      const { credentials } = yield* newClient
      const token = yield* issueToken(credentials, ttl)
      // The first lookup reads the token while it is valid; its answer comes back after the revocation was
      // heard (a slow connection), as the audit reproduced with a delaying proxy.
      const read = yield* Deferred.make<void>()
      const answer = yield* Deferred.make<void>()
      let lookups = 0
      const slowFirst = (hash: string) =>
        lookups++ === 0
          ? lookupBearer(hash).pipe(
              Effect.tap(() => Deferred.succeed(read, undefined)),
              Effect.zipLeft(Deferred.await(answer)),
            )
          : lookupBearer(hash)
      const tokens = yield* bearerTokensWith({ ttlSeconds: 60, capacity: 100 }, slowFirst)
      const during = yield* Effect.fork(Effect.either(tokens.authenticate(token.access_token)))
      yield* Deferred.await(read)
      yield* revokeToken({ ...credentials, token: token.access_token })
      yield* tokens.forget(token.access_token)
      yield* Deferred.succeed(answer, undefined)
      // The first lookup found the token valid: refused only because it was looked up again.
      const duringResult = yield* Fiber.join(during)
      expect(duringResult._tag).toBe("Left")
      expect(lookups).toBeGreaterThanOrEqual(2)
      invalidToken("revoked")(yield* Effect.flip(tokens.authenticate(token.access_token)))
    }),
  )

  it.scoped("still stops honouring a revocation it never heard within the cache's lifetime", () =>
    Effect.gen(function* () {
      const { credentials } = yield* newClient
      const token = yield* issueToken(credentials, ttl)
      // A 3 s lifetime: long enough that the entry is surely still alive one statement later on a slow
      // machine, short enough to wait for.
      const tokens = yield* processWith(3)
      const principal = yield* tokens.authenticate(token.access_token)
      // Revoked without a NOTIFY, as if this process's LISTEN connection had been lost meanwhile.
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE access_tokens SET revoked_at = now() WHERE token_hash = ${accessTokenHash(token.access_token)}`
      const revokedAt = Date.now()
      expect(yield* tokens.authenticate(token.access_token)).toEqual(principal)
      const refused = yield* refusedWithin(tokens, token.access_token, 10)
      invalidToken("revoked")(refused.error)
      expect(refused.at - revokedAt).toBeLessThan(5_000)
    }),
  )

  it.scoped("forgets a token revoked through this process at once", () =>
    Effect.gen(function* () {
      const { credentials } = yield* newClient
      const token = yield* issueToken(credentials, ttl)
      const tokens = yield* processWith(60)
      yield* tokens.authenticate(token.access_token)
      yield* revokeToken({ ...credentials, token: token.access_token })
      yield* tokens.forget(token.access_token)
      invalidToken("revoked")(yield* Effect.flip(tokens.authenticate(token.access_token)))
      const other = yield* issueToken(credentials, ttl)
      yield* tokens.authenticate(other.access_token)
      yield* revokeToken({ ...credentials, token: other.access_token })
      yield* tokens.forgetAll
      invalidToken("revoked")(yield* Effect.flip(tokens.authenticate(other.access_token)))
    }),
  )

  it.scoped("never remembers a token past its expiry, nor a token it refused", () =>
    Effect.gen(function* () {
      const { credentials } = yield* newClient
      const tokens = yield* processWith(60)
      const shortLived = yield* issueToken(credentials, { ttlSeconds: 1 })
      yield* tokens.authenticate(shortLived.access_token)
      const refused = yield* refusedWithin(tokens, shortLived.access_token, 5)
      invalidToken("expired")(refused.error)
      invalidToken("unknown")(yield* Effect.flip(tokens.authenticate(`pos_at_${"A".repeat(43)}`)))
      invalidToken("malformed")(yield* Effect.flip(tokens.authenticate("not-a-token")))
    }),
  )

  it.scoped("tells which tokens it holds as valid without looking any up", () =>
    Effect.gen(function* () {
      const { partnerId, credentials } = yield* newClient
      const token = yield* issueToken(credentials, ttl)
      let lookups = 0
      const counted = (hash: string) =>
        Effect.zipRight(
          Effect.sync(() => lookups++),
          lookupBearer(hash),
        )
      const tokens = yield* bearerTokensWith({ ttlSeconds: 60, capacity: 100 }, counted)
      // Not checked yet: not held, and asking looks nothing up.
      expect(yield* heldPrincipal(tokens, token.access_token)).toEqual(Option.none())
      expect(yield* heldPrincipal(tokens, token.access_token)).toEqual(Option.none())
      expect(lookups).toBe(0)
      // The lookup an unheld token comes with looks it up once, and the process then holds it.
      const unheld = yield* tokens.held(token.access_token)
      if (unheld._tag !== "Unheld") return expect.fail("a token never checked was held")
      const principal = yield* unheld.lookUp
      expect(principal.partnerId).toBe(partnerId)
      expect(lookups).toBe(1)
      expect(yield* heldPrincipal(tokens, token.access_token)).toEqual(Option.some(principal))
      expect(yield* tokens.authenticate(token.access_token)).toEqual(principal)
      expect(lookups).toBe(1)
      const other = yield* issueToken(credentials, ttl)
      yield* tokens.authenticate(other.access_token)
      yield* tokens.forget(token.access_token)
      expect(yield* heldPrincipal(tokens, token.access_token)).toEqual(Option.none())
      // Forgetting one token leaves the others held (a revocation does not distrust everything).
      expect(Option.isSome(yield* heldPrincipal(tokens, other.access_token))).toBe(true)
      yield* tokens.forgetAll
      expect(yield* heldPrincipal(tokens, other.access_token)).toEqual(Option.none())
      // Refused tokens are never held; malformed ones are refused without a lookup; a cache of 0 s holds nothing.
      const before = lookups
      yield* Effect.flip(tokens.authenticate(`pos_at_${"A".repeat(43)}`))
      expect(lookups).toBe(before + 1)
      expect(yield* heldPrincipal(tokens, `pos_at_${"A".repeat(43)}`)).toEqual(Option.none())
      const malformed = yield* tokens.held("not-a-token")
      if (malformed._tag !== "Unheld") return expect.fail("a malformed token was held")
      invalidToken("malformed")(yield* Effect.flip(malformed.lookUp))
      expect(lookups).toBe(before + 1)
      const uncached = yield* processWith(0)
      yield* uncached.authenticate(token.access_token)
      expect(yield* heldPrincipal(uncached, token.access_token)).toEqual(Option.none())
    }),
  )
})

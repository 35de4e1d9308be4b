import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schedule } from "effect"
import {
  authenticateBearer,
  issueCredential,
  issueToken,
  reapExpiredTokens,
  revokeCredential,
  rotateCredentialSecret,
} from "../../src/index.js"
import { serviceDatabase } from "../services/service-fixtures.js"
import { credentialsOf, invalidClient, invalidToken, newClient, ttl } from "./auth-fixtures.js"

layer(serviceDatabase({ poolSize: 12 }), { excludeTestServices: true })(
  "access tokens and their credential",
  (it) => {
    describe("credential lifecycle", () => {
      it.effect("revoking a credential revokes every token it holds", () =>
        Effect.gen(function* () {
          const { partnerId, issued, credentials } = yield* newClient
          const sibling = yield* issueCredential(partnerId, { name: "other" })
          const tokens = [yield* issueToken(credentials, ttl), yield* issueToken(credentials, ttl)]
          const siblingToken = yield* issueToken(credentialsOf(sibling), ttl)
          yield* revokeCredential(partnerId, issued.client_id)
          for (const token of tokens) {
            invalidToken("revoked")(yield* Effect.flip(authenticateBearer(token.access_token)))
          }
          expect((yield* authenticateBearer(siblingToken.access_token)).clientId).toBe(sibling.client_id)
        }),
      )

      it.effect("after a rotation the old secret works during the grace period, not after", () =>
        Effect.gen(function* () {
          const { partnerId, issued, credentials } = yield* newClient
          const rotated = yield* rotateCredentialSecret(partnerId, issued.client_id)
          yield* issueToken(credentials, ttl)
          yield* issueToken(credentialsOf(rotated), ttl)
          // No grace: the secret replaced now (the first rotation's) stops at once.
          const again = yield* rotateCredentialSecret(partnerId, issued.client_id, { gracePeriodSeconds: 0 })
          invalidClient(yield* Effect.flip(issueToken(credentialsOf(rotated), ttl)))
          // Only the latest rotation's previous secret is kept: the original is gone too.
          invalidClient(yield* Effect.flip(issueToken(credentials, ttl)))
          const token = yield* issueToken(credentialsOf(again), ttl)
          expect((yield* authenticateBearer(token.access_token)).clientId).toBe(issued.client_id)
        }),
      )

      it.effect("a token request racing a revocation gets no token once the revocation commits", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { credentials } = yield* newClient
          const locked = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          // A revocation in flight: the credential's row updated, not committed yet.
          const revocation = yield* Effect.fork(
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`UPDATE client_credentials SET status = 'revoked'
                         WHERE client_id = ${credentials.client_id}`
                yield* Deferred.succeed(locked, undefined)
                yield* Deferred.await(release)
              }),
            ),
          )
          yield* Deferred.await(locked)
          // The secret checks out against the committed row; the insert then waits on the row lock.
          const request = yield* Effect.fork(issueToken(credentials, ttl))
          yield* sql<{ waiting: boolean }>`
          SELECT count(*) > 0 AS waiting FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO access_tokens%'`.pipe(
            Effect.repeat({
              until: (rows) => rows[0]?.waiting === true,
              schedule: Schedule.spaced("10 millis"),
            }),
            Effect.timeout("5 seconds"),
          )
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(revocation)
          invalidClient(yield* Effect.flip(Fiber.join(request)))
          const tokens = yield* sql<{ count: string }>`
          SELECT count(*)::text AS count FROM access_tokens WHERE client_id = ${credentials.client_id}`
          expect(tokens[0]?.count).toBe("0")
        }),
      )
    })

    describe("reapExpiredTokens", () => {
      it.effect("deletes tokens expired longer than kept, in batches, and leaves live ones", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { credentials } = yield* newClient
          const tokens = yield* Effect.forEach(Array.from({ length: 5 }), () => issueToken(credentials, ttl))
          const expired = tokens.slice(0, 3).map((token) => token.token_id)
          yield* sql`UPDATE access_tokens SET created_at = now() - interval '2 hours',
                   expires_at = now() - interval '1 hour' WHERE token_id IN ${sql.in(expired)}`
          expect(yield* reapExpiredTokens({ keepSeconds: 7200 })).toBe(0)
          expect(yield* reapExpiredTokens({ keepSeconds: 60, batchSize: 2 })).toBe(3)
          const left = yield* sql<{ token_id: string }>`
          SELECT token_id::text AS token_id FROM access_tokens WHERE client_id = ${credentials.client_id}`
          expect(left.map((row) => row.token_id).sort()).toEqual(
            tokens
              .slice(3)
              .map((token) => token.token_id)
              .sort(),
          )
        }),
      )
    })
  },
)

import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { InvalidParams } from "@points/domain"
import { Effect, Metric, Schedule } from "effect"
import {
  accessTokenHash,
  authenticateBearer,
  clientSecretChecks,
  hashClientSecret,
  issueToken,
  revokeCredential,
  revokeToken,
  UNKNOWN_CLIENT_HASH,
} from "../../src/index.js"
import { newId } from "../fixtures.js"
import { serviceDatabase } from "../services/service-fixtures.js"
import { invalidClient, invalidToken, newClient, ttl } from "./auth-fixtures.js"

// How many Argon2id checks a refused token request made: counted, not timed (timing comparisons failed now
// and then on a loaded machine).
const checksOf = (client_id: string, client_secret: string) =>
  Effect.gen(function* () {
    const before = (yield* Metric.value(clientSecretChecks)).count
    invalidClient(yield* Effect.flip(issueToken({ client_id, client_secret }, ttl)))
    return (yield* Metric.value(clientSecretChecks)).count - before
  })

layer(serviceDatabase({ poolSize: 12 }), { excludeTestServices: true })("access tokens", (it) => {
  describe("issueToken and authenticateBearer", () => {
    it.effect("issues an opaque prefixed token, stored only as its SHA-256, that names the partner", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { partnerId, issued, credentials } = yield* newClient
        const before = Math.floor(Date.now() / 1000)
        const token = yield* issueToken(credentials, ttl)
        expect(token).toMatchObject({ token_type: "Bearer", expires_in: 3600 })
        expect(token.access_token).toMatch(/^pos_at_[A-Za-z0-9_-]{43}$/)
        expect(token.token).toBe(token.access_token)
        expect(token.expires_at).toBeGreaterThanOrEqual(before + 3600 - 5)
        expect(token.expires_at).toBeLessThanOrEqual(before + 3600 + 5)
        expect(yield* authenticateBearer(token.access_token)).toEqual({
          partnerId,
          clientId: issued.client_id,
          tokenId: token.token_id,
        })
        const rows = yield* sql<{ token_hash: string; row: string }>`
          SELECT token_hash, to_jsonb(t)::text AS row FROM access_tokens t WHERE token_id = ${token.token_id}`
        expect(rows[0]?.token_hash).toBe(accessTokenHash(token.access_token))
        expect(rows[0]?.row).not.toContain(token.access_token.slice("pos_at_".length))
      }),
    )

    it.effect("a wrong secret, an unknown client and a revoked client are all GH1001", () =>
      Effect.gen(function* () {
        const { partnerId, issued, credentials } = yield* newClient
        invalidClient(yield* Effect.flip(issueToken({ ...credentials, client_secret: "pos_cs_wrong" }, ttl)))
        invalidClient(yield* Effect.flip(issueToken({ ...credentials, client_id: newId() }, ttl)))
        invalidClient(yield* Effect.flip(issueToken({ ...credentials, client_id: "not-a-client" }, ttl)))
        yield* revokeCredential(partnerId, issued.client_id)
        invalidClient(yield* Effect.flip(issueToken(credentials, ttl)))
      }),
    )

    it.effect(
      "an unknown client costs an Argon2id check like a known one (timing reveals no client ids)",
      () =>
        Effect.gen(function* () {
          const { credentials } = yield* newClient
          // The dummy hash has exactly the parameters of real ones.
          const real = yield* hashClientSecret("pos_cs_anything")
          const parameters = (hash: string) => hash.split("$").slice(1, 4).join("$")
          expect(parameters(UNKNOWN_CLIENT_HASH)).toBe(parameters(real))
          // One check each, of equal cost: without the dummy check an unknown client answered in ~1 ms
          // against ~100 ms.
          expect(yield* checksOf(credentials.client_id, "pos_cs_wrong")).toBe(1)
          expect(yield* checksOf(newId(), "pos_cs_wrong")).toBe(1)
        }),
    )

    it.effect("an empty secret is GH1001 after an Argon2id check, like any wrong one (never a defect)", () =>
      Effect.gen(function* () {
        const { credentials } = yield* newClient
        expect(yield* checksOf(credentials.client_id, "pos_cs_wrong")).toBe(1)
        // An empty secret is checked like any other (hash-wasm, used before, refused it: a 500), and so is
        // any secret of an unknown client: what a refusal costs does not tell which client ids exist.
        expect(yield* checksOf(credentials.client_id, "")).toBe(1)
        expect(yield* checksOf(newId(), "")).toBe(1)
        expect(yield* checksOf(newId(), "pos_cs_wrong")).toBe(1)
        invalidClient(yield* Effect.flip(revokeToken({ ...credentials, client_secret: "", token: "x" })))
        expect((yield* issueToken(credentials, ttl)).token_type).toBe("Bearer")
      }),
    )

    it.effect("malformed and unknown tokens are GH1003 with their reason", () =>
      Effect.gen(function* () {
        for (const token of ["", "Bearer x", "pos_at_short", `pos_at_${"a".repeat(44)}`]) {
          invalidToken("malformed")(yield* Effect.flip(authenticateBearer(token)))
        }
        invalidToken("unknown")(yield* Effect.flip(authenticateBearer(`pos_at_${"A".repeat(43)}`)))
      }),
    )

    it.effect("a token is refused from its expires_at on (database clock)", () =>
      Effect.gen(function* () {
        const { credentials } = yield* newClient
        const token = yield* issueToken(credentials, { ttlSeconds: 1 })
        expect(token.expires_in).toBe(1)
        // Valid until the next whole second of the database clock: poll until refused, at most 5 s.
        const refusal = yield* authenticateBearer(token.access_token).pipe(
          Effect.flip,
          Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 100 }),
        )
        invalidToken("expired")(refusal)
        expect(Date.now() / 1000).toBeGreaterThanOrEqual(token.expires_at - 1)
        // A fresh token of the same client still works.
        const fresh = yield* issueToken(credentials, ttl)
        expect((yield* authenticateBearer(fresh.access_token)).tokenId).toBe(fresh.token_id)
      }),
    )

    it.effect("ttlSeconds outside 1..a year is a defect (configuration), not a refusal", () =>
      Effect.gen(function* () {
        const { credentials } = yield* newClient
        const exit = yield* Effect.exit(issueToken(credentials, { ttlSeconds: 0 }))
        expect(exit._tag === "Failure" && exit.cause._tag === "Die").toBe(true)
      }),
    )
  })

  describe("revokeToken (RFC 7009)", () => {
    it.effect(
      "revokes the client's own token; unknown ones are a no-op success, another client's refused",
      () =>
        Effect.gen(function* () {
          const owner = yield* newClient
          const other = yield* newClient
          const token = yield* issueToken(owner.credentials, ttl)
          const kept = yield* issueToken(owner.credentials, ttl)
          // Another client's attempt is refused (RFC 7009 2.1) and changes nothing.
          const refused = yield* Effect.flip(revokeToken({ ...other.credentials, token: token.access_token }))
          expect(refused).toBeInstanceOf(InvalidParams)
          expect(refused).toMatchObject({ field: "token", problem: "was not issued to this client" })
          expect((yield* authenticateBearer(token.access_token)).tokenId).toBe(token.token_id)
          // Each says whether it revoked a token now: unknown ones and repeats did not.
          expect(yield* revokeToken({ ...owner.credentials, token: `pos_at_${"B".repeat(43)}` })).toBe(false)
          expect(yield* revokeToken({ ...owner.credentials, token: "garbage" })).toBe(false)
          expect(yield* revokeToken({ ...owner.credentials, token: token.access_token })).toBe(true)
          invalidToken("revoked")(yield* Effect.flip(authenticateBearer(token.access_token)))
          // Revoking again is still a success.
          expect(yield* revokeToken({ ...owner.credentials, token: token.access_token })).toBe(false)
          expect((yield* authenticateBearer(kept.access_token)).tokenId).toBe(kept.token_id)
        }),
    )

    it.effect("a bad client is GH1001 and revokes nothing", () =>
      Effect.gen(function* () {
        const owner = yield* newClient
        const token = yield* issueToken(owner.credentials, ttl)
        const refused = yield* Effect.flip(
          revokeToken({ ...owner.credentials, client_secret: "pos_cs_wrong", token: token.access_token }),
        )
        invalidClient(refused)
        expect((yield* authenticateBearer(token.access_token)).tokenId).toBe(token.token_id)
      }),
    )
  })
})

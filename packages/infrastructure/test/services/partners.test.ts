import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AlreadyClosed } from "@points/domain"
import { Effect } from "effect"
import {
  createPartner,
  getPartnerResource,
  issueCredential,
  listCredentialResources,
  listPartnerResources,
  revokeCredential,
  rotateCredentialSecret,
  verifyClientSecret,
} from "../../src/index.js"
import { newId } from "../fixtures.js"
import { notFound, refusedWith, serviceDatabase } from "./service-fixtures.js"

const storedHashes = (clientId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ secret_hash: string; previous_secret_hash: string | null }>`
      SELECT secret_hash, previous_secret_hash FROM client_credentials WHERE client_id = ${clientId}`,
  )

layer(serviceDatabase(), { excludeTestServices: true })("partner and credential services", (it) => {
  describe("partners", () => {
    it.effect("creates, gets and lists partners; an unknown partner is LE0002", () =>
      Effect.gen(function* () {
        const acme = yield* createPartner({ name: "Acme" })
        const globex = yield* createPartner({ name: "Globex" })
        expect(acme).toMatchObject({ name: "Acme" })
        expect(yield* getPartnerResource(acme.id)).toEqual(acme)
        const page = yield* listPartnerResources({ limit: 100 })
        expect(page.data).toEqual(expect.arrayContaining([acme, globex]))
        notFound("partner")(yield* Effect.flip(getPartnerResource(newId())))
        notFound("partner")(yield* Effect.flip(getPartnerResource("acme")))
      }),
    )
  })

  describe("client credentials", () => {
    it.effect("issues a prefixed secret, shown once and stored only as an Argon2id hash", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const partner = yield* createPartner({ name: "Acme" })
        const issued = yield* issueCredential(partner.id, { name: "backend" })
        expect(issued.client_secret).toMatch(/^pos_cs_[A-Za-z0-9_-]{43}$/)
        const [stored] = yield* storedHashes(issued.client_id)
        expect(stored?.secret_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
        expect(yield* verifyClientSecret(issued.client_secret, stored?.secret_hash ?? "")).toBe(true)
        const leaks = yield* sql<{ count: string }>`
          SELECT count(*)::text AS count FROM events WHERE data::text LIKE ${`%${issued.client_secret}%`}`
        expect(leaks[0]?.count).toBe("0")
        const listed = yield* listCredentialResources(partner.id, {})
        expect(listed.data).toEqual([
          {
            client_id: issued.client_id,
            name: "backend",
            status: "active",
            previous_secret_valid_until: null,
            created_at: issued.created_at,
            updated_at: issued.created_at,
          },
        ])
        expect(JSON.stringify(listed)).not.toContain("argon2")
      }),
    )

    it.effect("an unknown partner is LE0002 for every credential operation", () =>
      Effect.gen(function* () {
        const partner = yield* createPartner({ name: "Acme" })
        const issued = yield* issueCredential(partner.id, {})
        for (const missing of [newId(), "acme"]) {
          notFound("partner")(yield* Effect.flip(issueCredential(missing, {})))
          notFound("partner")(yield* Effect.flip(listCredentialResources(missing, {})))
          notFound("partner")(yield* Effect.flip(rotateCredentialSecret(missing, issued.client_id)))
          notFound("partner")(yield* Effect.flip(revokeCredential(missing, issued.client_id)))
        }
      }),
    )

    it.effect("rotation gives a new secret and keeps the old hash for the grace period", () =>
      Effect.gen(function* () {
        const partner = yield* createPartner({ name: "Acme" })
        const issued = yield* issueCredential(partner.id, { name: null })
        const [before] = yield* storedHashes(issued.client_id)
        const rotated = yield* rotateCredentialSecret(partner.id, issued.client_id)
        expect(rotated.client_id).toBe(issued.client_id)
        expect(rotated.client_secret).not.toBe(issued.client_secret)
        expect(rotated.created_at >= issued.created_at).toBe(true)
        const [after] = yield* storedHashes(issued.client_id)
        expect(after?.previous_secret_hash).toBe(before?.secret_hash)
        expect(yield* verifyClientSecret(rotated.client_secret, after?.secret_hash ?? "")).toBe(true)
      }),
    )

    it.effect(
      "revocation is answered with the revoked credential; a repeat, or a rotation after, is LE0004",
      () =>
        Effect.gen(function* () {
          const partner = yield* createPartner({ name: "Acme" })
          const issued = yield* issueCredential(partner.id, { name: "ci" })
          const revoked = yield* revokeCredential(partner.id, issued.client_id)
          expect(revoked).toMatchObject({ client_id: issued.client_id, name: "ci", status: "revoked" })
          expect((yield* listCredentialResources(partner.id, {})).data).toEqual([revoked])
          const closed = refusedWith(AlreadyClosed, "LE0004")
          closed(yield* Effect.flip(revokeCredential(partner.id, issued.client_id)))
          closed(yield* Effect.flip(rotateCredentialSecret(partner.id, issued.client_id)))
        }),
    )

    it.effect("another partner's client, an unknown one and a non-UUID v7 are LE0002", () =>
      Effect.gen(function* () {
        const a = yield* createPartner({ name: "A" })
        const b = yield* createPartner({ name: "B" })
        const issued = yield* issueCredential(a.id, {})
        for (const clientId of [issued.client_id, newId(), "client"]) {
          notFound("client")(yield* Effect.flip(revokeCredential(b.id, clientId)))
          notFound("client")(yield* Effect.flip(rotateCredentialSecret(b.id, clientId)))
        }
        expect((yield* listCredentialResources(b.id, {})).data).toEqual([])
        expect((yield* listCredentialResources(a.id, {})).data[0]?.status).toBe("active")
      }),
    )
  })
})

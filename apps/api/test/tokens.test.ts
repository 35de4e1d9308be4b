import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ADMIN_TOKEN, call, eventually, newPartner, type Reply, testServer } from "./harness.js"

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

const tokenFor = (clientId: string, clientSecret: string) =>
  call("POST", "/api/oauth/token", { json: { client_id: clientId, client_secret: clientSecret } })

const expectRefusedToken = (reply: Reply) => {
  expect(reply.status).toBe(401)
  expect(reply.body.errors[0].code).toBe("GH1003")
  expect(reply.headers.get("www-authenticate")).toContain("Bearer")
}

// Two seconds, not one: the check that the fresh token works must not race its expiry on a loaded machine.
// Three seconds: the first use right after the issue must not race the end of the lifetime on a slow machine.
layer(testServer({ tokenTtlSeconds: 3 }), { timeout: "120 seconds", excludeTestServices: true })(
  "Access token lifetime",
  (it) => {
    it.effect("a token lives at least expires_in seconds from its issue, less than one more", () =>
      Effect.gen(function* () {
        const { clientId, clientSecret } = yield* newPartner()
        const sql = yield* SqlClient.SqlClient
        // Several, so that one issued on a whole second of the database clock (floor and ceiling alike)
        // cannot pass alone.
        for (let i = 0; i < 3; i++) {
          const issued = yield* tokenFor(clientId, clientSecret)
          expect(issued.status, issued.text).toBe(200)
          const [row] = yield* sql<{ lifetime: string; expires_at: string }>`
            SELECT extract(epoch FROM expires_at - created_at)::text AS lifetime,
                   extract(epoch FROM expires_at)::text AS expires_at
            FROM access_tokens WHERE token_id = ${issued.body.token_id}`
          expect(Number(row?.lifetime)).toBeGreaterThanOrEqual(issued.body.expires_in)
          expect(Number(row?.lifetime)).toBeLessThan(issued.body.expires_in + 1)
          expect(Number(row?.expires_at)).toBe(issued.body.expires_at)
        }
      }),
    )

    it.effect("refuses a token with 401 GH1003 once TOKEN_TTL_SECONDS has passed", () =>
      Effect.gen(function* () {
        const { clientId, clientSecret } = yield* newPartner()
        const issued = yield* tokenFor(clientId, clientSecret)
        expect(issued.status).toBe(200)
        expect(issued.body.expires_in).toBe(3)
        const token = issued.body.access_token as string
        expect((yield* call("GET", "/api/users", { token })).status).toBe(200)
        const expired = yield* eventually(
          call("GET", "/api/users", { token }),
          (reply) => reply.status !== 200,
          10,
        )
        expectRefusedToken(expired)
        // The credential itself is fine: a new token works.
        const renewed = yield* tokenFor(clientId, clientSecret)
        expect((yield* call("GET", "/api/users", { token: renewed.body.access_token })).status).toBe(200)
      }),
    )
  },
)

layer(testServer(), { timeout: "120 seconds", excludeTestServices: true })("Client credentials", (it) => {
  it.effect("revoking a credential (admin DELETE) refuses its tokens and its secret, not the others'", () =>
    Effect.gen(function* () {
      const { partnerId, clientId, clientSecret, token } = yield* newPartner()
      const other = yield* call("POST", `/admin/api/partners/${partnerId}/clients`, {
        json: { name: "other" },
        headers: admin,
      })
      const otherToken = (yield* tokenFor(other.body.client_id, other.body.client_secret)).body.access_token
      expect((yield* call("GET", "/api/users", { token })).status).toBe(200)

      const revoked = yield* call("DELETE", `/admin/api/partners/${partnerId}/clients/${clientId}`, {
        headers: admin,
      })
      expect(revoked.status).toBe(200)
      expectRefusedToken(yield* call("GET", "/api/users", { token }))
      const refusedSecret = yield* tokenFor(clientId, clientSecret)
      expect(refusedSecret.status).toBe(401)
      expect(refusedSecret.body.errors[0].code).toBe("GH1001")
      expect((yield* call("GET", "/api/users", { token: otherToken })).status).toBe(200)
    }),
  )

  it.effect("rotating a secret keeps the old one working during its grace period, beside the new one", () =>
    Effect.gen(function* () {
      const { partnerId, clientId, clientSecret, token } = yield* newPartner()
      const rotated = yield* call(
        "POST",
        `/admin/api/partners/${partnerId}/clients/${clientId}/rotate-secret`,
        { headers: admin },
      )
      expect(rotated.status).toBe(200)
      expect(rotated.headers.get("cache-control")).toBe("no-store")
      // A day after the rotation by default.
      expect(Date.parse(rotated.body.previous_secret_valid_until) - Date.parse(rotated.body.created_at)).toBe(
        86_400_000,
      )
      const newSecret = rotated.body.client_secret as string
      expect(newSecret).not.toBe(clientSecret)

      const withOld = yield* tokenFor(clientId, clientSecret)
      expect(withOld.status).toBe(200)
      const withNew = yield* tokenFor(clientId, newSecret)
      expect(withNew.status).toBe(200)
      for (const bearer of [token, withOld.body.access_token, withNew.body.access_token]) {
        expect((yield* call("GET", "/api/users", { token: bearer })).status).toBe(200)
      }
      expect((yield* tokenFor(clientId, `${clientSecret}x`)).status).toBe(401)

      // The credential's list shows the grace period running, so an operator can see it before rotating again.
      const listed = () =>
        Effect.map(
          call("GET", `/admin/api/partners/${partnerId}/clients`, { headers: admin }),
          (answer) =>
            (
              answer.body.data as Array<{ client_id: string; previous_secret_valid_until: string | null }>
            ).find((credential) => credential.client_id === clientId)?.previous_secret_valid_until,
        )
      expect(yield* listed()).toBe(rotated.body.previous_secret_valid_until)
      // A rotation keeps one replaced secret: rotating again within the grace period ends the first one at once.
      const again = yield* call(
        "POST",
        `/admin/api/partners/${partnerId}/clients/${clientId}/rotate-secret`,
        { headers: admin },
      )
      expect(again.status).toBe(200)
      expect((yield* tokenFor(clientId, clientSecret)).status).toBe(401)
      expect((yield* tokenFor(clientId, newSecret)).status).toBe(200)
      expect(yield* listed()).toBe(again.body.previous_secret_valid_until)
      // Revoked, no secret gets a token: none is shown as still working.
      yield* call("DELETE", `/admin/api/partners/${partnerId}/clients/${clientId}`, { headers: admin })
      expect(yield* listed()).toBeNull()
    }),
  )

  it.effect("rotating with grace_seconds=0 ends the old secret at once (a secret that leaked)", () =>
    Effect.gen(function* () {
      const { partnerId, clientId, clientSecret } = yield* newPartner()
      const path = `/admin/api/partners/${partnerId}/clients/${clientId}/rotate-secret`
      // A bad grace period is refused, naming the parameter, and rotates nothing.
      for (const bad of ["-1", "1.5", "2592001", "1e3", "day"]) {
        const refused = yield* call("POST", `${path}?grace_seconds=${bad}`, { headers: admin })
        expect(refused.status).toBe(400)
        expect(refused.body.errors).toEqual([
          expect.objectContaining({
            code: "GH1006",
            message: "grace_seconds must be an integer from 0 to 2592000",
          }),
        ])
      }
      expect((yield* tokenFor(clientId, clientSecret)).status).toBe(200)

      const rotated = yield* call("POST", `${path}?grace_seconds=0`, { headers: admin })
      expect(rotated.status).toBe(200)
      // The answer says when the old secret stopped: at the rotation itself.
      expect(rotated.body.previous_secret_valid_until).toBe(rotated.body.created_at)
      const refusedOld = yield* tokenFor(clientId, clientSecret)
      expect(refusedOld.status).toBe(401)
      expect(refusedOld.body.errors[0].code).toBe("GH1001")
      expect((yield* tokenFor(clientId, rotated.body.client_secret)).status).toBe(200)
      // Nothing replaced still works: the list shows none.
      const listed = yield* call("GET", `/admin/api/partners/${partnerId}/clients`, { headers: admin })
      expect(listed.body.data).toEqual([
        expect.objectContaining({ client_id: clientId, previous_secret_valid_until: null }),
      ])
    }),
  )
})

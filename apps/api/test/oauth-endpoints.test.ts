import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import {
  addressRateLimitKey,
  CLIENT_RATE_LIMIT,
  clientRateLimitKey,
  consumeClientRateLimit,
  NETWORKS_PER_SITE,
  siteRateLimitKey,
  sourceSiteOf,
} from "@points/infrastructure"
import { Effect } from "effect"
import {
  baseUrl,
  call,
  metricValue,
  newPartner,
  nodeRequest,
  piecesOf,
  type Reply,
  TEST_ADDRESS_RATE_LIMIT,
  testServer,
  testServerOn,
} from "./harness.js"

const FORM = "application/x-www-form-urlencoded"
const TOKEN = "/api/oauth/token"
const REVOKE = "/api/oauth/revoke"

const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({
  body: new URLSearchParams(fields).toString(),
  headers: { "content-type": FORM, ...headers },
})

/** An Authorization header of HTTP Basic credentials, each part form-urlencoded first (RFC 6749 2.3.1). */
const basic = (id: string, secret: string) => {
  const pair = `${encodeURIComponent(id)}:${encodeURIComponent(secret)}`
  return { authorization: `Basic ${Buffer.from(pair).toString("base64")}` }
}

/** The RFC 6749 5.1 / 5.2 headers every answer of the OAuth endpoints carries. */
const expectNoStore = (reply: Reply) => {
  expect(reply.headers.get("cache-control"), `${reply.status} ${reply.text}`).toBe("no-store")
  expect(reply.headers.get("pragma"), `${reply.status} ${reply.text}`).toBe("no-cache")
}

/** 401 GH1001 `invalid_client`, with a Basic challenge when the client tried the Authorization header. */
const expectInvalidClient = (reply: Reply, challenged: boolean) => {
  expect(reply.status, reply.text).toBe(401)
  expect(reply.body.errors[0].code).toBe("GH1001")
  expect(reply.body.error).toBe("invalid_client")
  expect(reply.body.error_description).toBe(reply.body.errors[0].message)
  if (challenged) expect(reply.headers.get("www-authenticate")).toBe('Basic realm="points"')
  else expect(reply.headers.get("www-authenticate")).toBeNull()
  expectNoStore(reply)
}

/** A random text of `length` characters that PostgreSQL cannot compress (an index entry of its full size). */
const randomText = (length: number) =>
  Array.from({ length }, () => String.fromCharCode(33 + Math.floor(Math.random() * 94))).join("")

// A LIKE pattern of every rate-limit key of a client id, whatever the source (see clientRateLimitKey).
const clientKeysOf = (clientId: string) => `${clientRateLimitKey(clientId, "").split("@")[0]}@%`

const rejections = Effect.map(call("GET", "/metrics"), (reply) =>
  metricValue(reply.text, "rate_limit_rejections_total"),
)

layer(testServer(), { timeout: "120 seconds", excludeTestServices: true })("The OAuth endpoints", (it) => {
  it.effect("an empty client_secret is 401 invalid_client on both endpoints, never a 500", () =>
    Effect.gen(function* () {
      const { clientId, clientSecret } = yield* newPartner()
      const unknownId = "0190a000-0000-7000-8000-000000000000"
      expectInvalidClient(yield* call("POST", TOKEN, form({ client_id: clientId, client_secret: "" })), false)
      expectInvalidClient(
        yield* call("POST", TOKEN, form({ client_id: unknownId, client_secret: "" })),
        false,
      )
      expectInvalidClient(
        yield* call("POST", TOKEN, { json: { client_id: clientId, client_secret: "" } }),
        false,
      )
      expectInvalidClient(yield* call("POST", TOKEN, form({}, basic(clientId, ""))), true)
      expectInvalidClient(yield* call("POST", TOKEN, form({}, basic(unknownId, ""))), true)
      expectInvalidClient(
        yield* call("POST", REVOKE, form({ token: "x", client_id: clientId, client_secret: "" })),
        false,
      )
      expectInvalidClient(yield* call("POST", REVOKE, form({ token: "x" }, basic(clientId, ""))), true)
      // The credential itself is untouched.
      expect(
        (yield* call("POST", TOKEN, form({ client_id: clientId, client_secret: clientSecret }))).status,
      ).toBe(200)
    }),
  )

  it.effect(
    "a client id thousands of characters long is an unknown client (401); one with a NUL is 400 in a body, 401 in Basic",
    () =>
      Effect.gen(function* () {
        const long = randomText(3000)
        for (const clientId of ["a\u0000b", long]) {
          // In a body, a NUL breaks a rule of every text (DESIGN.md section 2): GH1006 naming the field.
          const inBody = (reply: Reply) =>
            clientId === long
              ? expectInvalidClient(reply, false)
              : expect(reply.body.errors[0]).toMatchObject({
                  code: "GH1006",
                  message: "client_id must not contain NUL characters",
                })
          inBody(yield* call("POST", TOKEN, form({ client_id: clientId, client_secret: "x" })))
          inBody(yield* call("POST", TOKEN, { json: { client_id: clientId, client_secret: "x" } }))
          expectInvalidClient(yield* call("POST", TOKEN, form({}, basic(clientId, "x"))), true)
          inBody(yield* call("POST", REVOKE, form({ token: "x", client_id: clientId, client_secret: "x" })))
        }
        // The throttle still counts such a client id, under a key of fixed length.
        const sql = yield* SqlClient.SqlClient
        const keys = yield* sql<{
          key: string
        }>`SELECT key FROM rate_limits WHERE key = ${clientRateLimitKey(long, "127.0.0.1")}`
        expect(keys).toHaveLength(1)
        expect(clientRateLimitKey(long, "127.0.0.1").length).toBe(clientRateLimitKey("a", "127.0.0.1").length)
      }),
  )

  it.effect("another source's guesses at a client's secret leave the client's own callers their tokens", () =>
    Effect.gen(function* () {
      const { clientId, clientSecret } = yield* newPartner()
      // Someone elsewhere who knows the client id (it is not secret) emptied its bucket for a minute there.
      const sql = yield* SqlClient.SqlClient
      yield* consumeClientRateLimit(clientId, "198.51.100.9")
      const emptied = yield* sql`UPDATE rate_limits SET tat = clock_timestamp() + interval '60 seconds'
        WHERE key = ${clientRateLimitKey(clientId, "198.51.100.9")} RETURNING key`
      expect(emptied).toHaveLength(1)
      const issued = yield* call("POST", TOKEN, form({ client_id: clientId, client_secret: clientSecret }))
      expect(issued.status, issued.text).toBe(200)
      // Its own bucket here, less this request and newPartner's (or refilled since): not the one emptied elsewhere.
      const left = /"client";r=(\d+);/.exec(issued.headers.get("ratelimit") ?? "")?.[1]
      expect(Number(left)).toBeGreaterThanOrEqual(CLIENT_RATE_LIMIT.burst - 2)
    }),
  )

  it.effect("a throttled client gets 429 GH1009 with Retry-After and the RateLimit headers, counted", () =>
    Effect.gen(function* () {
      const { clientId, clientSecret, token } = yield* newPartner()
      const before = yield* rejections
      // The client's bucket emptied for a minute (as a guessing client would leave it), without paying an
      // Argon2 check per request, nor racing its refill on a loaded machine.
      const key = clientRateLimitKey(clientId, "127.0.0.1")
      yield* consumeClientRateLimit(clientId, "127.0.0.1")
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE rate_limits SET tat = clock_timestamp() + interval '60 seconds' WHERE key = ${key}`
      const throttled = [
        yield* call("POST", TOKEN, form({ client_id: clientId, client_secret: clientSecret })),
        yield* call("POST", REVOKE, form({ token, client_id: clientId, client_secret: clientSecret })),
      ]
      for (const reply of throttled) {
        expect(reply.status, reply.text).toBe(429)
        expect(reply.body.errors[0].code).toBe("GH1009")
        // RFC 6749 has no throttling code: the one that tells the client to come back later.
        expect(reply.body.error).toBe("temporarily_unavailable")
        expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(50)
        // The address's bucket was asked first and let it through; the client's refused it.
        expect(reply.headers.get("ratelimit-policy")).toBe(
          `"address";q=${2 * TEST_ADDRESS_RATE_LIMIT};w=1, "client";q=${CLIENT_RATE_LIMIT.burst};w=1`,
        )
        expect(reply.headers.get("ratelimit")).toMatch(/^"address";r=\d+;t=\d+, "client";r=0;t=\d+$/)
        expectNoStore(reply)
      }
      expect(yield* rejections).toBe(before + 2)
      // The token was not revoked: the refused request executed nothing.
      expect((yield* call("GET", "/api/users", { token })).status).toBe(200)
    }),
  )

  it.effect("an Authorization header that is not Basic credentials is 401 invalid_client, challenged", () =>
    Effect.gen(function* () {
      const { clientId, clientSecret } = yield* newPartner()
      const broken = [
        `Basic ${Buffer.from("abc").toString("base64")}`,
        "Basic !!!!",
        "Basic abc",
        `Basic ${Buffer.from("%zz:secret").toString("base64")}`,
        `Basic ${Buffer.from(`${clientId}:%zz`).toString("base64")}`,
        `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString("base64")}`,
        "Basic",
        `Bearer ${clientSecret}`,
      ]
      for (const authorization of broken) {
        expectInvalidClient(yield* call("POST", TOKEN, form({}, { authorization })), true)
        // Body credentials beside a broken header are not used instead of it.
        const both = form({ client_id: clientId, client_secret: clientSecret }, { authorization })
        expectInvalidClient(yield* call("POST", TOKEN, both), true)
        expectInvalidClient(yield* call("POST", REVOKE, form({ token: "x" }, { authorization })), true)
      }
    }),
  )

  it.effect("HTTP Basic with no body at all issues a token; revoke without a body names `token`", () =>
    Effect.gen(function* () {
      const { clientId, clientSecret } = yield* newPartner()
      const issued = yield* call("POST", TOKEN, { headers: basic(clientId, clientSecret) })
      expect(issued.status, issued.text).toBe(200)
      expect(issued.body.token_type).toBe("Bearer")
      expectNoStore(issued)
      expect((yield* call("GET", "/api/users", { token: issued.body.access_token })).status).toBe(200)
      const revoke = yield* call("POST", REVOKE, { headers: basic(clientId, clientSecret) })
      expect(revoke.status, revoke.text).toBe(400)
      expect(revoke.body.errors[0]).toMatchObject({ code: "GH1006", message: "token is required" })
      expect(revoke.body.error).toBe("invalid_request")
      expectNoStore(revoke)
    }),
  )

  it.effect(
    "revoking another client's token is 400 GH1006 and leaves it valid; an unknown token is 200",
    () =>
      Effect.gen(function* () {
        const owner = yield* newPartner()
        const other = yield* newPartner("Other")
        const credentials = { client_id: other.clientId, client_secret: other.clientSecret }
        const refused = yield* call("POST", REVOKE, form({ ...credentials, token: owner.token }))
        expect(refused.status, refused.text).toBe(400)
        expect(refused.body.errors[0]).toMatchObject({
          code: "GH1006",
          message: "token was not issued to this client",
        })
        expect(refused.body.error).toBe("invalid_request")
        expectNoStore(refused)
        expect((yield* call("GET", "/api/users", { token: owner.token })).status).toBe(200)
        const unknown = yield* call(
          "POST",
          REVOKE,
          form({ ...credentials, token: `pos_at_${"C".repeat(43)}` }),
        )
        expect(unknown.status, unknown.text).toBe(200)
      }),
  )

  it.effect("a parameter sent without a value, in a form or JSON, is as if omitted (RFC 6749 3.2)", () =>
    Effect.gen(function* () {
      const { clientId, clientSecret } = yield* newPartner()
      const header = basic(clientId, clientSecret)
      for (const empty of [{ client_id: "" }, { client_secret: "" }, { grant_type: "" }]) {
        for (const reply of [
          yield* call("POST", TOKEN, form(empty, header)),
          yield* call("POST", TOKEN, { json: empty, headers: header }),
        ]) {
          expect(reply.status, `${JSON.stringify(empty)}: ${reply.text}`).toBe(200)
          expect(reply.body.token_type).toBe("Bearer")
        }
      }
      // The same answer as the parameter's absence: its status, error and headers, nothing run further.
      const sameAs = (omitted: Reply, empty: Reply) => {
        expect(empty.status, empty.text).toBe(omitted.status)
        const { id: _omittedId, ...omittedError } = omitted.body.errors[0]
        const { id: _emptyId, ...emptyError } = empty.body.errors[0]
        expect(emptyError).toEqual(omittedError)
        expect(empty.body.error).toBe(omitted.body.error)
        for (const name of ["ratelimit-policy", "www-authenticate"])
          expect(empty.headers.get(name) === null, name).toBe(omitted.headers.get(name) === null)
        expectNoStore(empty)
      }
      const noToken = yield* call("POST", REVOKE, form({}, header))
      expect(noToken.body.errors[0]).toMatchObject({ code: "GH1006", message: "token is required" })
      sameAs(noToken, yield* call("POST", REVOKE, form({ token: "" }, header)))
      sameAs(noToken, yield* call("POST", REVOKE, { json: { token: "" }, headers: header }))
      const { token } = (yield* call("POST", TOKEN, form({}, header))).body
      for (const [path, fields] of [
        [TOKEN, { client_id: clientId }],
        [REVOKE, { client_id: clientId, token }],
      ] as const) {
        const noSecret = yield* call("POST", path, form(fields))
        expectInvalidClient(noSecret, false)
        sameAs(noSecret, yield* call("POST", path, form({ ...fields, client_secret: "" })))
        sameAs(noSecret, yield* call("POST", path, { json: { ...fields, client_secret: "" } }))
      }
    }),
  )

  it.effect("a non-empty scope is 400 invalid_scope, from a form or JSON; an empty one is none", () =>
    Effect.gen(function* () {
      const { clientId, clientSecret } = yield* newPartner()
      const credentials = { client_id: clientId, client_secret: clientSecret }
      const refused = [
        yield* call("POST", TOKEN, form({ ...credentials, scope: "read" })),
        yield* call("POST", TOKEN, { json: { ...credentials, scope: "read write" } }),
        yield* call(
          "POST",
          TOKEN,
          form({ grant_type: "client_credentials", scope: "x" }, basic(clientId, clientSecret)),
        ),
      ]
      for (const reply of refused) {
        expect(reply.status, reply.text).toBe(400)
        expect(reply.body.errors).toEqual([
          expect.objectContaining({
            code: "GH1006",
            message: "scope is not supported: this platform issues tokens without scopes; omit it",
          }),
        ])
        expect(reply.body.error).toBe("invalid_scope")
        expect(reply.body.error_description).toBe(reply.body.errors[0].message)
        expectNoStore(reply)
      }
      for (const reply of [
        yield* call("POST", TOKEN, form({ ...credentials, scope: "" })),
        yield* call("POST", TOKEN, { json: { ...credentials, scope: "" } }),
      ]) {
        expect(reply.status, reply.text).toBe(200)
        expect(reply.body.scope).toBeUndefined()
      }
    }),
  )

  it.effect(
    "beside Basic, the body may name the same client (any letter case), not another, nor hold a secret",
    () =>
      Effect.gen(function* () {
        const { clientId, clientSecret, token } = yield* newPartner()
        const other = yield* newPartner("Other")
        const header = basic(clientId, clientSecret)
        for (const named of [clientId, clientId.toUpperCase()]) {
          const issued = yield* call(
            "POST",
            TOKEN,
            form({ grant_type: "client_credentials", client_id: named }, header),
          )
          expect(issued.status, issued.text).toBe(200)
          const revoked = yield* call(
            "POST",
            REVOKE,
            form({ token: issued.body.access_token, client_id: named }, header),
          )
          expect(revoked.status, revoked.text).toBe(200)
        }
        const json = yield* call("POST", TOKEN, { json: { client_id: clientId }, headers: header })
        expect(json.status, json.text).toBe(200)
        const mismatched = [
          yield* call("POST", TOKEN, form({ client_id: other.clientId }, header)),
          yield* call("POST", REVOKE, form({ token, client_id: other.clientId }, header)),
        ]
        for (const reply of mismatched) {
          expect(reply.status, reply.text).toBe(400)
          expect(reply.body.errors).toEqual([
            expect.objectContaining({
              code: "GH1006",
              message: "client_id does not match the Authorization header",
            }),
          ])
          expect(reply.body.error).toBe("invalid_request")
          expectNoStore(reply)
        }
        const twoWays = [
          yield* call("POST", TOKEN, form({ client_secret: clientSecret }, header)),
          yield* call("POST", TOKEN, form({ client_id: clientId, client_secret: clientSecret }, header)),
          yield* call(
            "POST",
            REVOKE,
            form({ token, client_id: clientId, client_secret: clientSecret }, header),
          ),
        ]
        for (const reply of twoWays) {
          expect(reply.status, reply.text).toBe(400)
          expect(reply.body.errors[0]).toMatchObject({
            code: "GH1006",
            message: "invalid params: use one way to authenticate the client",
          })
        }
        // Nothing was revoked by the refused requests.
        expect((yield* call("GET", "/api/users", { token })).status).toBe(200)
      }),
  )

  it.effect(
    "a client id in upper case names the client, on both endpoints, and counts against its bucket",
    () =>
      Effect.gen(function* () {
        const { clientId, clientSecret } = yield* newPartner()
        const upper = clientId.toUpperCase()
        expect(upper).not.toBe(clientId)
        const inBody = yield* call("POST", TOKEN, form({ client_id: upper, client_secret: clientSecret }))
        expect(inBody.status, inBody.text).toBe(200)
        const inBasic = yield* call("POST", TOKEN, form({}, basic(upper, clientSecret)))
        expect(inBasic.status, inBasic.text).toBe(200)
        const revoked = yield* call(
          "POST",
          REVOKE,
          form({ token: inBody.body.access_token, client_id: upper, client_secret: clientSecret }),
        )
        expect(revoked.status, revoked.text).toBe(200)
        expect((yield* call("GET", "/api/users", { token: inBody.body.access_token })).status).toBe(401)
        // One bucket for every way of writing the id: the lower-case id's emptied, the upper-case one is refused.
        expect(clientRateLimitKey(upper, "127.0.0.1")).toBe(clientRateLimitKey(clientId, "127.0.0.1"))
        const mixed = clientId.replace(/[a-f]/, (letter) => letter.toUpperCase())
        yield* consumeClientRateLimit(clientId, "127.0.0.1")
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE rate_limits SET tat = clock_timestamp() + interval '60 seconds'
        WHERE key = ${clientRateLimitKey(clientId, "127.0.0.1")}`
        for (const written of [upper, mixed]) {
          const throttled = yield* call(
            "POST",
            TOKEN,
            form({ client_id: written, client_secret: clientSecret }),
          )
          expect(throttled.status, throttled.text).toBe(429)
          expect(throttled.headers.get("ratelimit")).toMatch(/"client";r=0;/)
        }
      }),
  )

  it.effect("a parameter given more than once is 400 invalid_request naming it as such", () =>
    Effect.gen(function* () {
      const { clientId, clientSecret } = yield* newPartner()
      const credentials = `client_id=${clientId}&client_secret=${encodeURIComponent(clientSecret)}`
      const repeated = yield* call("POST", TOKEN, {
        body: `grant_type=client_credentials&grant_type=client_credentials&${credentials}`,
        headers: { "content-type": FORM },
      })
      expect(repeated.status, repeated.text).toBe(400)
      expect(repeated.body.errors).toEqual([
        expect.objectContaining({ code: "GH1006", message: "grant_type is given more than once" }),
      ])
      expect(repeated.body.error).toBe("invalid_request")
      expectNoStore(repeated)
      // Beside another problem, each is reported; on the revocation endpoint too.
      const two = yield* call("POST", REVOKE, {
        body: `token=a&token=b&client_id=a%00b&${credentials.replace(/^client_id=[^&]*&/, "")}`,
        headers: { "content-type": FORM },
      })
      expect(two.status, two.text).toBe(400)
      expect(two.body.errors.map((entry: { message: string }) => entry.message).sort()).toEqual([
        "client_id must not contain NUL characters",
        "token is given more than once",
      ])
      // A JSON array is no repetition: it is not a string.
      const json = yield* call("POST", TOKEN, {
        json: { grant_type: ["client_credentials"], client_id: clientId, client_secret: clientSecret },
      })
      expect(json.status, json.text).toBe(400)
      expect(json.body.errors[0].message).toBe("grant_type must be a string")
    }),
  )

  it.effect("/metrics serves client_secret_checks_total, one per token request", () =>
    Effect.gen(function* () {
      const { clientId, clientSecret } = yield* newPartner()
      const checks = Effect.map(call("GET", "/metrics"), (reply) => {
        expect(reply.text).toMatch(/^# TYPE client_secret_checks_total counter$/m)
        return metricValue(reply.text, "client_secret_checks_total")
      })
      const before = yield* checks
      expect(before).toBeGreaterThan(0)
      expect(
        (yield* call("POST", TOKEN, form({ client_id: clientId, client_secret: clientSecret }))).status,
      ).toBe(200)
      expect(yield* checks).toBe(before + 1)
    }),
  )

  it.effect(
    "a percent-encoded path to either endpoint is answered as the endpoint is, no-store included",
    () =>
      Effect.gen(function* () {
        const { clientId, clientSecret } = yield* newPartner()
        const credentials = { client_id: clientId, client_secret: clientSecret }
        // The router decodes each segment: `%6F` is `o`, so these are the token and revoke endpoints.
        const issued = yield* call("POST", "/api/%6Fauth/token", form(credentials))
        expect(issued.status, issued.text).toBe(200)
        expect(issued.body.token_type).toBe("Bearer")
        expectNoStore(issued)
        // HTTP Basic with no body at all, as on the plain path.
        const basicOnly = yield* call("POST", "/api/%6fauth/token", {
          headers: basic(clientId, clientSecret),
        })
        expect(basicOnly.status, basicOnly.text).toBe(200)
        expectNoStore(basicOnly)
        const refused = yield* call(
          "POST",
          "/api/%6Fauth/token",
          form({ ...credentials, client_secret: "wrong" }),
        )
        expectInvalidClient(refused, false)
        const missing = yield* call("POST", "/api/%6Fauth/revoke", form(credentials))
        expect(missing.status, missing.text).toBe(400)
        expect(missing.body.error).toBe("invalid_request")
        expectNoStore(missing)
        const revoked = yield* call(
          "POST",
          "/api/%6Fauth/revoke",
          form({ ...credentials, token: issued.body.token }),
        )
        expect(revoked.status, revoked.text).toBe(200)
        expectNoStore(revoked)
        expect((yield* call("GET", "/api/users", { token: issued.body.token })).status).toBe(401)
      }),
  )

  it.effect("every answer of both endpoints carries Cache-Control: no-store and Pragma: no-cache", () =>
    Effect.gen(function* () {
      const { clientId, clientSecret } = yield* newPartner()
      const credentials = { client_id: clientId, client_secret: clientSecret }
      const issued = yield* call("POST", TOKEN, form(credentials))
      const replies: Array<readonly [number, Reply]> = [
        [200, issued],
        [200, yield* call("POST", REVOKE, form({ ...credentials, token: issued.body.access_token }))],
        [400, yield* call("POST", TOKEN, form({ ...credentials, grant_type: "password" }))],
        [400, yield* call("POST", REVOKE, form(credentials))],
        [400, yield* call("POST", TOKEN, { body: "{", headers: { "content-type": "application/json" } })],
        [401, yield* call("POST", TOKEN, form({ ...credentials, client_secret: "wrong" }))],
        [401, yield* call("POST", REVOKE, form({ token: "x" }))],
        [413, yield* call("POST", TOKEN, form({ ...credentials, padding: "x".repeat(1_100_000) }))],
        [415, yield* call("POST", TOKEN, { body: "hello", headers: { "content-type": "text/plain" } })],
        [415, yield* call("POST", REVOKE, { body: "hello", headers: { "content-type": "text/plain" } })],
      ]
      const base = yield* baseUrl
      const padding = new URLSearchParams({ ...credentials, padding: "x".repeat(1_100_000) }).toString()
      replies.push([
        413,
        yield* nodeRequest(`${base}${TOKEN}`, {
          method: "POST",
          headers: { "content-type": FORM },
          chunks: piecesOf(padding),
          chunked: true,
        }),
      ])
      for (const [status, reply] of replies) {
        expect(reply.status, reply.text).toBe(status)
        if (status >= 400) expect(typeof reply.body.error).toBe("string")
        expectNoStore(reply)
      }
    }),
  )
})

layer(testServer(), { timeout: "120 seconds", excludeTestServices: true })(
  "The OAuth endpoints' faults",
  (it) => {
    it.effect("a failure of ours (500 SV5000) is not stored either", () =>
      Effect.gen(function* () {
        const { clientId, clientSecret } = yield* newPartner()
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`CREATE FUNCTION injected_fault() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected fault in access_tokens'; END $$`)
        yield* sql.unsafe(`CREATE TRIGGER injected_fault BEFORE INSERT ON access_tokens
        FOR EACH ROW EXECUTE FUNCTION injected_fault()`)
        const reply = yield* call("POST", TOKEN, form({ client_id: clientId, client_secret: clientSecret }))
        yield* sql.unsafe("DROP TRIGGER injected_fault ON access_tokens")
        yield* sql.unsafe("DROP FUNCTION injected_fault()")
        expect(reply.status, reply.text).toBe(500)
        expect(reply.body.errors[0].code).toBe("SV5000")
        expect(reply.body.error).toBe("server_error")
        expectNoStore(reply)
      }),
    )
  },
)

// Burst 2: the partner's own token request and one more, then the address is throttled.
layer(testServer({ tokenRateLimitPerAddress: 1 }), { timeout: "120 seconds", excludeTestServices: true })(
  "The OAuth endpoints' limit per source address",
  (it) => {
    it.effect(
      "made-up client ids from one address are throttled before any secret is checked, and so is everyone there",
      () =>
        Effect.gen(function* () {
          const { clientId, clientSecret } = yield* newPartner()
          const sql = yield* SqlClient.SqlClient
          const guessed = form({ client_id: `guess-${crypto.randomUUID()}`, client_secret: "guess" })
          const first = yield* call("POST", TOKEN, guessed)
          expect(first.status, first.text).toBe(401)
          expect(first.headers.get("ratelimit-policy")).toBe(
            `"address";q=2;w=1, "client";q=${CLIENT_RATE_LIMIT.burst};w=1`,
          )
          const before = yield* rejections
          // The address's bucket emptied for a minute, without racing its refill on a loaded machine.
          const key = addressRateLimitKey("127.0.0.1")
          const emptied = yield* sql`UPDATE rate_limits SET tat = clock_timestamp() + interval '60 seconds'
            WHERE key = ${key} RETURNING key`
          expect(emptied).toHaveLength(1)
          const another = `guess-${crypto.randomUUID()}`
          const throttled = [
            yield* call("POST", TOKEN, form({ client_id: another, client_secret: "guess" })),
            yield* call("POST", TOKEN, form({ client_id: clientId, client_secret: clientSecret })),
            yield* call(
              "POST",
              REVOKE,
              form({ token: "x", client_id: clientId, client_secret: clientSecret }),
            ),
          ]
          for (const reply of throttled) {
            expect(reply.status, reply.text).toBe(429)
            expect(reply.body.errors[0].code).toBe("GH1009")
            expect(reply.body.error).toBe("temporarily_unavailable")
            expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(50)
            // Only the address's bucket was asked.
            expect(reply.headers.get("ratelimit-policy")).toBe(`"address";q=2;w=1`)
            expect(reply.headers.get("ratelimit")).toMatch(/^"address";r=0;t=\d+$/)
            expectNoStore(reply)
          }
          expect(yield* rejections).toBe(before + 3)
          // Nothing was taken from the clients' buckets: the made-up id never got one.
          const clientRows = yield* sql`SELECT key FROM rate_limits WHERE key LIKE ${clientKeysOf(another)}`
          expect(clientRows).toHaveLength(0)
        }),
    )
  },
)

// From IPv6 (::1), whose /64 has a bucket of 2 and whose /48 one of twice that.
layer(testServerOn("::1", { tokenRateLimitPerAddress: 1 }), {
  timeout: "120 seconds",
  excludeTestServices: true,
})("The OAuth endpoints' limit per IPv6 site", (it) => {
  it.effect(
    "asks an IPv6 caller's /48 after its /64, and refuses every network of a site whose bucket is empty",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* baseUrl).toMatch(/^http:\/\/\[::1\]:\d+$/)
        const guessed = () => form({ client_id: `guess-${crypto.randomUUID()}`, client_secret: "guess" })
        const first = yield* call("POST", TOKEN, guessed())
        expect(first.status, first.text).toBe(401)
        expect(first.headers.get("ratelimit-policy")).toBe(
          `"address";q=2;w=1, "site";q=${2 * NETWORKS_PER_SITE};w=1, "client";q=${CLIENT_RATE_LIMIT.burst};w=1`,
        )
        // The site's bucket emptied for a minute (as by its other networks), the network's left full.
        const siteKey = siteRateLimitKey(sourceSiteOf("::1") ?? "")
        const emptied = yield* sql`UPDATE rate_limits SET tat = clock_timestamp() + interval '60 seconds'
        WHERE key = ${siteKey} RETURNING key`
        expect(emptied).toHaveLength(1)
        yield* sql`DELETE FROM rate_limits WHERE key = ${addressRateLimitKey("::1")}`
        const before = yield* rejections
        const another = `guess-${crypto.randomUUID()}`
        const refused = yield* call("POST", TOKEN, form({ client_id: another, client_secret: "guess" }))
        expect(refused.status, refused.text).toBe(429)
        expect(refused.body.errors[0].code).toBe("GH1009")
        expect(refused.body.error).toBe("temporarily_unavailable")
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(50)
        // Its network had room, and has its cell back; its site had none; its client was not asked.
        expect(refused.headers.get("ratelimit-policy")).toBe(
          `"address";q=2;w=1, "site";q=${2 * NETWORKS_PER_SITE};w=1`,
        )
        expect(refused.headers.get("ratelimit")).toMatch(/^"address";r=2;t=0, "site";r=0;t=\d+$/)
        expectNoStore(refused)
        expect(yield* rejections).toBe(before + 1)
        expect(yield* sql`SELECT key FROM rate_limits WHERE key LIKE ${clientKeysOf(another)}`).toHaveLength(
          0,
        )
      }),
  )
})

import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { CLIENT_RATE_LIMIT, clientRateLimitKey, consumeClientRateLimit } from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"

layer(testDatabase(), { excludeTestServices: true })("consumeClientRateLimit", (it) => {
  it.effect("throttles any client id text, a NUL or kilobytes of it, under a key of fixed length", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // Random, so PostgreSQL cannot compress it: as the raw key it went over the btree's row size limit.
      const long = randomBytes(3000).toString("base64")
      for (const clientId of [newId(), "a\u0000b", long]) {
        const key = clientRateLimitKey(clientId, "192.0.2.1")
        expect(key).toMatch(/^client:[0-9a-f]{64}@192\.0\.2\.1$/)
        // The bucket refills while the requests run (5 a second): on a busy machine the 21st may pass, so
        // the requests go on until one is refused, and what passed is bounded by the burst and the refill.
        const started = Date.now()
        let allowed = 0
        while (
          allowed <= 10 * CLIENT_RATE_LIMIT.burst &&
          (yield* consumeClientRateLimit(clientId, "192.0.2.1")).allowed
        )
          allowed++
        const refill = ((Date.now() - started) / 1000) * CLIENT_RATE_LIMIT.ratePerSecond
        expect(allowed).toBeGreaterThanOrEqual(CLIENT_RATE_LIMIT.burst)
        expect(allowed).toBeLessThanOrEqual(CLIENT_RATE_LIMIT.burst + Math.ceil(refill))
        const rows = yield* sql<{ key: string }>`SELECT key FROM rate_limits WHERE key = ${key}`
        expect(rows).toHaveLength(1)
      }
      // One id is one bucket per source; two ids are two.
      expect(clientRateLimitKey("a\u0000b", "192.0.2.1")).toBe(clientRateLimitKey("a\u0000b", "192.0.2.1"))
      expect(clientRateLimitKey("a\u0000b", "192.0.2.1")).not.toBe(
        clientRateLimitKey("a\u0000c", "192.0.2.1"),
      )
    }),
  )

  it.effect(
    "gives each source of a client's requests a bucket of its own: an IPv4 address, an IPv6 /48",
    () =>
      Effect.gen(function* () {
        const clientId = newId()
        // Another source emptied the client's bucket for a minute, as a caller guessing its secret would
        // (without racing its refill on a loaded machine).
        const sql = yield* SqlClient.SqlClient
        yield* consumeClientRateLimit(clientId, "198.51.100.9")
        yield* sql`UPDATE rate_limits SET tat = clock_timestamp() + interval '60 seconds'
          WHERE key = ${clientRateLimitKey(clientId, "198.51.100.9")}`
        expect((yield* consumeClientRateLimit(clientId, "198.51.100.9")).allowed).toBe(false)
        // The client's own callers, elsewhere, keep their allowance.
        for (const address of ["203.0.113.5", "::ffff:203.0.113.6", "2001:db8:1:2::7"]) {
          expect((yield* consumeClientRateLimit(clientId, address)).allowed, address).toBe(true)
        }
        // A /48's networks are one source: a caller holding one has a single bucket per client.
        expect(clientRateLimitKey(clientId, "2001:db8:1:2::7")).toBe(
          clientRateLimitKey(clientId, "2001:db8:1:ffff::1"),
        )
        expect(clientRateLimitKey(clientId, "2001:db8:1::1")).not.toBe(
          clientRateLimitKey(clientId, "2001:db8:2::1"),
        )
        // An IPv4 address mapped into IPv6 is that IPv4 address.
        expect(clientRateLimitKey(clientId, "::ffff:198.51.100.9")).toBe(
          clientRateLimitKey(clientId, "198.51.100.9"),
        )
      }),
  )
})

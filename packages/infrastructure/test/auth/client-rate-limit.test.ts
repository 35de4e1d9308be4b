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
        const key = clientRateLimitKey(clientId)
        expect(key).toMatch(/^client:[0-9a-f]{64}$/)
        // The bucket refills while the requests run (5 a second): on a busy machine the 21st may pass, so
        // the requests go on until one is refused, and what passed is bounded by the burst and the refill.
        const started = Date.now()
        let allowed = 0
        while (allowed <= 10 * CLIENT_RATE_LIMIT.burst && (yield* consumeClientRateLimit(clientId)).allowed)
          allowed++
        const refill = ((Date.now() - started) / 1000) * CLIENT_RATE_LIMIT.ratePerSecond
        expect(allowed).toBeGreaterThanOrEqual(CLIENT_RATE_LIMIT.burst)
        expect(allowed).toBeLessThanOrEqual(CLIENT_RATE_LIMIT.burst + Math.ceil(refill))
        const rows = yield* sql<{ key: string }>`SELECT key FROM rate_limits WHERE key = ${key}`
        expect(rows).toHaveLength(1)
      }
      // One id is one bucket; two ids are two.
      expect(clientRateLimitKey("a\u0000b")).toBe(clientRateLimitKey("a\u0000b"))
      expect(clientRateLimitKey("a\u0000b")).not.toBe(clientRateLimitKey("a\u0000c"))
    }),
  )
})

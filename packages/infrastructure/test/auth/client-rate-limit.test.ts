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
        const decisions = yield* Effect.forEach(Array.from({ length: CLIENT_RATE_LIMIT.burst + 1 }), () =>
          consumeClientRateLimit(clientId),
        )
        expect(decisions.slice(0, -1).every((decision) => decision.allowed)).toBe(true)
        expect(decisions.at(-1)?.allowed).toBe(false)
        const rows = yield* sql<{ key: string }>`SELECT key FROM rate_limits WHERE key = ${key}`
        expect(rows).toHaveLength(1)
      }
      // One id is one bucket; two ids are two.
      expect(clientRateLimitKey("a\u0000b")).toBe(clientRateLimitKey("a\u0000b"))
      expect(clientRateLimitKey("a\u0000b")).not.toBe(clientRateLimitKey("a\u0000c"))
    }),
  )
})

import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { testDatabase } from "@points/infrastructure/testing"
import { Effect } from "effect"
import { activeUserAt, callAt, eventually, newPartnerAt } from "./harness.js"
import { killProcess, listeningProcess, processSettings } from "./processes.js"

const keyRows = (partnerId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ key: string }>`SELECT key FROM idempotency_keys WHERE partner_id = ${partnerId} ORDER BY key`,
      (rows) => rows.map((row) => row.key),
    ),
  )

layer(testDatabase({ poolSize: 2 }), { timeout: "120 seconds", excludeTestServices: true })(
  "Housekeeping in the API process",
  (it) => {
    it.scoped("deletes expired idempotency keys every HOUSEKEEPING_INTERVAL_SECONDS; live ones stay", () =>
      Effect.gen(function* () {
        const { base, env } = yield* processSettings({
          HOUSEKEEPING_INTERVAL_SECONDS: "1",
          // Three seconds: the replay of a fresh key, two requests later, must come within its lifetime.
          IDEMPOTENCY_TTL_SECONDS: "3",
        })
        const api = yield* listeningProcess(env, base)
        const { partnerId, token } = yield* newPartnerAt(base, "Sweep Ltd")
        const userId = yield* activeUserAt(base, token, "sweep-1", 30)
        const add = (key: string, reference: string) =>
          callAt(base, "POST", "/api/points/add", {
            token,
            json: { transaction: { user_id: userId, amount: 5, reference_id: reference } },
            headers: { "idempotency-key": key },
          })
        expect((yield* add("sweep-old", "sweep-old")).status).toBe(201)
        expect(yield* keyRows(partnerId)).toContain("sweep-old")
        // Nothing else deletes a key row: once its lifetime is over, the process's sweeps do.
        yield* eventually(keyRows(partnerId), (keys) => !keys.includes("sweep-old"), 30)
        expect((yield* add("sweep-new", "sweep-new")).status).toBe(201)
        // Swept once expired only: a live key is still there (and replays) right after.
        const retry = yield* add("sweep-new", "sweep-new")
        expect(retry.headers.get("idempotent-replayed")).toBe("true")
        yield* killProcess(api)
      }),
    )
  },
)

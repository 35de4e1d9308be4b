import type { ChildProcess } from "node:child_process"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runWebhookDispatcher, runWebhookFanOut } from "../../src/index.js"
import { TEST_SERVER_URL_VARIABLE } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"
import { readyProcess } from "../ready-process.js"
import {
  createEndpoint,
  deliveriesOf,
  eventually,
  publishEvent,
  startReceiver,
  webhookDatabase,
} from "./webhook-fixtures.js"

const publishMany = (partnerId: string, count: number) =>
  Effect.forEach(Array.from({ length: count }), () => publishEvent(partnerId), { concurrency: 4 })

/** How many deliveries the receiver got of each webhook-id. */
const countsById = (received: ReadonlyArray<{ readonly headers: Record<string, unknown> }>) => {
  const counts = new Map<string, number>()
  for (const request of received) {
    const id = String(request.headers["webhook-id"])
    counts.set(id, (counts.get(id) ?? 0) + 1)
  }
  return counts
}

/** This test file's database URL, for a child process: the run's server, and our database on it. */
const databaseUrl = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ name: string }>`SELECT current_database() AS name`
  const url = new URL(process.env[TEST_SERVER_URL_VARIABLE] ?? "")
  url.pathname = `/${row?.name}`
  return url.href
})

/** Starts a dispatcher process (fan-out + dispatcher) and waits until it says it is ready. */
const startDispatcherProcess = (url: string, id: string) =>
  readyProcess("test/webhooks/dispatcher-process.ts", {
    DATABASE_URL: url,
    DISPATCHER_ID: id,
    DISPATCH_CONCURRENCY: "4",
  })

const killed = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })

layer(webhookDatabase(30), { excludeTestServices: true })("dispatchers at scale", (it) => {
  it.scoped("two dispatchers at once deliver every attempt exactly once", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const receiver = yield* startReceiver()
      const partner = newId()
      const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
      const events = yield* publishMany(partner, 200)
      yield* Effect.forkScoped(runWebhookFanOut({ pollInterval: "100 millis" }))
      // Fan-out of 200 events: ~1 s here, far longer on a machine busy with other runs.
      yield* eventually(deliveriesOf(endpoint.endpointId), (rows) => rows.length === 200, 60)
      for (const instanceId of ["first", "second"]) {
        yield* Effect.forkScoped(
          runWebhookDispatcher({
            allowPrivateTargets: true,
            pollInterval: "200 millis",
            concurrency: 4,
            instanceId,
          }),
        )
      }
      yield* eventually(
        deliveriesOf(endpoint.endpointId),
        (rows) => rows.every((row) => row.status === "succeeded"),
        60,
      )
      const counts = countsById(receiver.received)
      expect(counts.size).toBe(200)
      expect([...counts.values()].every((count) => count === 1)).toBe(true)
      expect(new Set(counts.keys())).toEqual(new Set(events))
      // Both took part.
      const byDispatcher = yield* sql<{ dispatcher: string; attempts: number }>`
        SELECT split_part(leased_by, '/', 1) AS dispatcher, count(*)::int AS attempts
        FROM webhook_deliveries WHERE endpoint_id = ${endpoint.endpointId} GROUP BY 1 ORDER BY 1`
      expect(byDispatcher.map((row) => row.dispatcher)).toEqual(["first", "second"])
      expect(byDispatcher.every((row) => row.attempts > 0)).toBe(true)
    }),
  )

  it.scoped(
    "a dispatcher process killed (SIGKILL) mid-batch and restarted: every event delivered, none lost",
    () =>
      Effect.gen(function* () {
        // Slow answers, so that attempts are in flight when the process dies.
        const receiver = yield* startReceiver(() => ({ status: 200, delayMs: 200 }))
        const partner = newId()
        const endpoint = yield* createEndpoint(partner, { url: receiver.url() })
        const url = yield* databaseUrl
        const first = yield* startDispatcherProcess(url, "killed")
        yield* Effect.addFinalizer(() => killed(first))
        const events = yield* publishMany(partner, 60)
        yield* eventually(
          Effect.sync(() => receiver.received.length),
          (n) => n >= 10,
          60,
        )
        yield* killed(first)
        const beforeRestart = countsById(receiver.received).size
        expect(beforeRestart).toBeLessThan(60)

        const second = yield* startDispatcherProcess(url, "restarted")
        yield* Effect.addFinalizer(() => killed(second))
        const rows = yield* eventually(
          deliveriesOf(endpoint.endpointId),
          (all) => all.length >= 60 && all.every((row) => row.status !== "pending"),
          60,
        )
        const counts = countsById(receiver.received)
        expect(new Set(counts.keys())).toEqual(new Set(events))
        // Each event succeeded once in the records; only attempts in flight at the kill reached the receiver twice.
        const succeeded = rows.filter((row) => row.status === "succeeded").map((row) => row.event_id)
        expect(succeeded.sort()).toEqual([...events].sort())
        // The killed process had attempts in flight (received, never recorded): made again, same webhook-id.
        const twice = [...counts.values()].filter((count) => count > 1).length
        expect(twice).toBeGreaterThanOrEqual(1)
        expect(twice).toBeLessThanOrEqual(4)
        expect(
          rows.filter((row) => row.leased_by?.startsWith("killed/") && row.status !== "pending").length,
        ).toBeGreaterThan(0)
      }),
    { timeout: 120_000 },
  )
})

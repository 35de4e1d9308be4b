// Write batch benchmark: the group-committed Add points of bench:http without HTTP, to see what the write
// path itself costs. Two clients take turns, as bench:http's 64 connections settle into two groups: each
// makes BENCH_BATCH (32) add plans on one account and hands them to the write batcher at once, with the
// direct write path's rate-limit ask and 201 response, while the other's batch is written; BENCH_ROUNDS (400)
// batches after 30 of warm-up, on an embedded server of its own. Prints the node CPU time (this process,
// every thread) and the PostgreSQL CPU time per add, then checks that the account holds what the adds
// credited. No target: it tells how much of bench:http's CPU per request is the write path's.
import { createHash, randomUUID } from "node:crypto"
import {
  Email,
  IdempotencyKey,
  PartnerUserId,
  Points,
  ReferenceId,
  TransactionResource,
  type UserId,
} from "@points/domain"
import {
  activateUsersHandler,
  addPointsPlan,
  anyUnitPlan,
  type BatchRequest,
  batchMetric,
  createPartner,
  getPointsAccountResource,
  type RequestContext,
  readStream,
  registerUser,
  userStream,
  WriteBatcher,
  WriteSideLive,
} from "@points/infrastructure"
import { Effect, Metric, Schema } from "effect"
import { descendantsCpuMsOf } from "./bench-http-usage.js"
import { integerSetting, onEmbeddedDatabase } from "./bench-setup.js"

const ROUNDS = integerSetting("BENCH_ROUNDS", 400, 100_000)
const BATCH = integerSetting("BENCH_BATCH", 32, 64)
const WARM_UP_ROUNDS = 30
const AMOUNT = 5
const encodeTransaction = Schema.encodeSync(TransactionResource)

/** A registered and activated user of a new partner, and the partner's request context. */
const accountHolder = Effect.gen(function* () {
  const partner = yield* createPartner({ name: "bench" })
  const context: RequestContext = {
    partnerId: partner.id as RequestContext["partnerId"],
    requestId: `req-${randomUUID()}`,
    idempotencyKey: `key-${randomUUID()}`,
  }
  const user = yield* registerUser(context, {
    partner_user_id: PartnerUserId.make(`bench-${randomUUID()}`),
    email: Email.make(`bench-${randomUUID()}@example.com`),
    name: "Bench",
  })
  const read = yield* readStream(userStream(user.id).streamId, partner.id)
  yield* activateUsersHandler(read.events)
  return { context, userId: user.id as UserId }
})

const benchmark = Effect.gen(function* () {
  const { context: partner, userId } = yield* accountHolder
  const batcher = yield* WriteBatcher
  const policy = { ratePerSecond: 1_000_000, burst: 1_000_000 }

  // One add as the direct write path hands it to the batcher.
  const requestOf = () =>
    Effect.gen(function* () {
      const key = IdempotencyKey.IdempotencyKeyValue.make(randomUUID())
      const context = { ...partner, requestId: `req-${randomUUID()}`, idempotencyKey: key }
      const body = {
        user_id: userId,
        amount: Points.make(AMOUNT),
        reference_id: ReferenceId.make(randomUUID()),
      }
      const plan = yield* addPointsPlan(context, body)
      return {
        plan: anyUnitPlan(plan),
        claim: {
          partnerId: partner.partnerId,
          key,
          fingerprint: {
            method: "POST",
            path: "/api/points/add",
            bodySha256: createHash("sha256")
              .update(JSON.stringify({ transaction: body }))
              .digest("hex"),
          },
          leaseSeconds: 30,
          lifetimeSeconds: 86_400,
        },
        respond: (resource) => ({
          status: 201,
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(encodeTransaction(resource as TransactionResource)),
        }),
        rateLimit: { key: `partner:${partner.partnerId}`, policy },
      } satisfies BatchRequest
    })
  // The plans are made first and then handed over in one go, so that they make one batch.
  const round = Effect.flatMap(Effect.forEach(Array.from({ length: BATCH }), requestOf), (requests) =>
    Effect.forEach(
      requests,
      (request) =>
        Effect.flatMap(batcher.submit(request), (outcome) =>
          outcome._tag === "Committed"
            ? Effect.void
            : Effect.die(`an add was not committed: ${outcome._tag}`),
        ),
      { concurrency: "unbounded", discard: true },
    ),
  )
  // Two clients: one's batch is written while the other's requests queue, so each batch is a whole round.
  const client = (count: number) => (count === 0 ? Effect.void : Effect.repeatN(round, count - 1))
  const rounds = (count: number) =>
    Effect.all([client(Math.ceil(count / 2)), client(Math.floor(count / 2))], {
      concurrency: 2,
      discard: true,
    })

  const batchesWritten = Effect.map(Metric.value(batchMetric.batches("committed")), (state) => state.count)
  yield* rounds(WARM_UP_ROUNDS)
  const batchesBefore = yield* batchesWritten
  const cpu = process.cpuUsage()
  const postgresMs = descendantsCpuMsOf(process.pid, "postgres")
  const started = performance.now()
  yield* rounds(ROUNDS)
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const nodeMs = (used.user + used.system) / 1000
  const postgresUsedMs = descendantsCpuMsOf(process.pid, "postgres") - postgresMs
  const adds = ROUNDS * BATCH
  const batches = (yield* batchesWritten) - batchesBefore

  const account = yield* getPointsAccountResource(partner, userId)
  const expected = (WARM_UP_ROUNDS + ROUNDS) * BATCH * AMOUNT
  console.log(
    `write batch: ${adds} adds on one account in ${seconds.toFixed(1)} s, ${ROUNDS} rounds of ${BATCH} written ` +
      `in ${batches} batches (${Math.round(adds / seconds)} adds/s, ${((seconds * 1000) / batches).toFixed(1)} ms ` +
      "per batch)",
  )
  console.log(
    `CPU per add: node ${((nodeMs * 1000) / adds).toFixed(0)} us (${(nodeMs / batches).toFixed(1)} ms per batch), ` +
      `PostgreSQL ${((postgresUsedMs * 1000) / adds).toFixed(0)} us`,
  )
  const holds = account.balance === expected
  console.log(
    `balance check: the account holds ${account.balance} points, the adds credited ${expected}: ${holds ? "OK" : "MISMATCH"}`,
  )
  console.log(
    JSON.stringify({
      name: "batch",
      batch: BATCH,
      batches,
      adds_per_s: Math.round(adds / seconds),
      node_cpu_us_per_add: Math.round((nodeMs * 1000) / adds),
      postgres_cpu_us_per_add: Math.round((postgresUsedMs * 1000) / adds),
      balance_ok: holds,
    }),
  )
  if (!holds) process.exitCode = 1
})

await onEmbeddedDatabase("batch", 10, Effect.provide(benchmark, WriteSideLive))

import { FetchHttpClient } from "@effect/platform"
import { expect, it } from "@effect/vitest"
import { Config, ConfigProvider, Effect, Layer } from "effect"
import { makePointsClient } from "./src/index.js"
import { transactionBody, userBody } from "./test/fixtures.js"
import { errorBody, scriptedServer } from "./test/scripted-server.js"

// The example of README.md, word for word, so that it cannot rot.
const program = Effect.gen(function* () {
  const client = yield* makePointsClient({
    baseUrl: yield* Config.string("POINTS_BASE_URL"),
    clientId: yield* Config.string("POINTS_CLIENT_ID"),
    // Keep the secret out of code (published 5.7): the environment or a secret manager.
    clientSecret: yield* Config.redacted("POINTS_CLIENT_SECRET"),
  })
  const user = yield* client.getUser("0198d7e2-7c4f-7000-8000-0000000000a1")
  return yield* client.addPoints({ user_id: user.id, amount: 250, reference_id: "welcome-bonus-a1" }).pipe(
    // A 500 on Add points: the transaction was most likely recorded anyway. Reconcile by its reference_id.
    Effect.catchTag("PendingOutcome", (pending) =>
      Effect.flatMap(
        client.findTransactions({ reference_id: pending.referenceId, user_id: user.id }),
        // An order's debit and refund carry the order's reference_id too: the add is the one of type "add".
        (page) => {
          const added = page.data.find((transaction) => transaction.type === "add")
          return added === undefined ? Effect.fail(pending) : Effect.succeed(added)
        },
      ),
    ),
  )
})

it.scopedLive("README example: a 500 on Add points is reconciled by reference_id, user and type", () =>
  Effect.gen(function* () {
    const server = yield* scriptedServer
    const userId = "0198d7e2-7c4f-7000-8000-0000000000a1"
    server.script("GET", `/api/users/${userId}`, [{ status: 200, body: { ...userBody(userId, "active") } }])
    server.script("POST", "/api/points/add", [
      { status: 500, body: errorBody("SV5000", "unexpected server error") },
    ])
    const recorded = {
      ...transactionBody("0198d7e2-0000-7000-8000-0000000000t1", "welcome-bonus-a1", 250),
      user_id: userId,
    }
    // An order of the user with the same reference_id, debited before the add.
    const debit = {
      ...transactionBody("0198d7e2-0000-7000-8000-0000000000t0", "welcome-bonus-a1", 40),
      user_id: userId,
      type: "order_debit",
      order_id: "0198d7e2-0000-7000-8000-0000000000o1",
    }
    server.script("GET", "/api/points/transactions", [
      { status: 200, body: { data: [debit, recorded], next_cursor: null } },
    ])
    const environment = ConfigProvider.fromMap(
      new Map([
        ["POINTS_BASE_URL", server.baseUrl],
        ["POINTS_CLIENT_ID", "client-1"],
        ["POINTS_CLIENT_SECRET", "pos_cs_secret"],
      ]),
    )
    const transaction = yield* program.pipe(
      Effect.provide(Layer.merge(FetchHttpClient.layer, Layer.setConfigProvider(environment))),
    )
    expect(transaction).toEqual(recorded)
    const lookup = server.requestsTo("GET", "/api/points/transactions")[0]
    expect(lookup?.headers.authorization).toBe("Bearer tok-1")
    expect(new URLSearchParams(lookup?.query).get("user_id")).toBe(userId)
  }),
)

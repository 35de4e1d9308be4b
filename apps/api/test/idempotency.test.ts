import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { uuidv7 as uuidV7 } from "uuidv7"
import {
  activeUser,
  baseUrl,
  call,
  eventually,
  heldRequest,
  metricNow,
  metricValue,
  newPartner,
  nodeRequest,
  testServer,
  testServerWithoutActivation,
  withActivation,
} from "./harness.js"

const add = (userId: string, amount: number, reference: string) => ({
  transaction: { user_id: userId, amount, reference_id: reference },
})

const replayed = (reply: { readonly headers: Headers }) => reply.headers.get("idempotent-replayed") === "true"

// Users stay `processing` here until a test runs the activation consumer: a 409 LE0001 is reproducible.
layer(testServerWithoutActivation(), { timeout: "120 seconds", excludeTestServices: true })(
  "Idempotency-Key over HTTP",
  (it) => {
    it.effect("runs 20 parallel POSTs with one key exactly once; the others replay it or get IK1002", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const userId = yield* withActivation(activeUser(token))
        const replaysBefore = metricValue((yield* call("GET", "/metrics")).text, "idempotency_replays_total")
        const headers = { "idempotency-key": "parallel-key" }
        const replies = yield* Effect.all(
          Array.from({ length: 20 }, () =>
            call("POST", "/api/points/add", { token, json: add(userId, 7, "parallel-1"), headers }),
          ),
          { concurrency: "unbounded" },
        )
        const created = replies.filter((reply) => reply.status === 201)
        const busy = replies.filter((reply) => reply.status === 409)
        expect(created.length + busy.length).toBe(20)
        for (const reply of busy) expect(reply.body.errors[0].code).toBe("IK1002")
        // One execution answered without the replay header; every other 201 is its recorded response.
        expect(created.filter((reply) => !replayed(reply))).toHaveLength(1)
        expect(new Set(created.map((reply) => reply.text)).size).toBe(1)

        const retry = yield* call("POST", "/api/points/add", {
          token,
          json: add(userId, 7, "parallel-1"),
          headers,
        })
        expect(retry.status).toBe(201)
        expect(replayed(retry)).toBe(true)
        expect(retry.text).toBe(created[0]?.text)

        const found = yield* call("GET", "/api/points/transactions?reference_id=parallel-1", { token })
        expect(found.body.data).toHaveLength(1)
        expect(found.body.data[0].id).toBe(created[0]?.body.id)
        const account = yield* call("GET", `/api/users/${userId}/points-account`, { token })
        expect(account.body.balance).toBe(7)

        // /metrics counts every replay answered.
        const replaysAfter = metricValue((yield* call("GET", "/metrics")).text, "idempotency_replays_total")
        expect(replaysAfter - replaysBefore).toBe(created.filter(replayed).length + 1)

        // Once recorded, retries arriving together all get the recorded answer (IK1002 is for a request that
        // still runs), and another body with the key is IK1001 however many arrive.
        const together = yield* Effect.all(
          Array.from({ length: 20 }, (_, n) =>
            call("POST", "/api/points/add", {
              token,
              json: add(userId, n % 2 === 0 ? 7 : 8, "parallel-1"),
              headers,
            }),
          ),
          { concurrency: "unbounded" },
        )
        together.forEach((reply, n) => {
          if (n % 2 === 0) {
            expect(reply.status).toBe(201)
            expect(reply.text).toBe(created[0]?.text)
          } else {
            expect(reply.status).toBe(422)
            expect(reply.body.errors[0].code).toBe("IK1001")
          }
        })
        expect((yield* call("GET", `/api/users/${userId}/points-account`, { token })).body.balance).toBe(7)
      }),
    )

    it.effect(
      "writes 48 parallel movements of one account, each key once: balance exact, each retry replays",
      () =>
        Effect.gen(function* () {
          const { token } = yield* newPartner()
          const userId = yield* withActivation(activeUser(token))
          // Enough for every subtract, whatever order the requests arrive in.
          const seed = yield* call("POST", "/api/points/add", {
            token,
            json: add(userId, 100, `seed-${uuidV7()}`),
          })
          expect(seed.status).toBe(201)
          const requests = Array.from({ length: 48 }, (_, n) => ({
            key: `burst-${n}-${uuidV7()}`,
            path: n % 6 === 5 ? "/api/points/subtract" : "/api/points/add",
            json: add(userId, n % 6 === 5 ? 1 : 10, `burst-${n}-${uuidV7()}`),
          }))
          const send = (request: (typeof requests)[number]) =>
            call("POST", request.path, {
              token,
              json: request.json,
              headers: { "idempotency-key": request.key },
            })
          // Orders are written one by one, beside the batches: their ids and the batches' interleave.
          const placeOrder = (n: number) =>
            call("POST", "/api/orders", {
              token,
              json: {
                user_id: userId,
                reference_id: `order-${n}`,
                items: [{ sku: "A", quantity: 1, points: 2 }],
              },
              headers: { "idempotency-key": `order-${n}-${uuidV7()}` },
            })
          const [replies, orders] = yield* Effect.all(
            [
              Effect.forEach(requests, send, { concurrency: "unbounded" }),
              Effect.forEach([0, 1, 2, 3, 4, 5], placeOrder, { concurrency: "unbounded" }),
            ],
            { concurrency: "unbounded" },
          )
          expect(orders.map((reply) => reply.status)).toEqual(orders.map(() => 201))
          expect(replies.map((reply) => reply.status)).toEqual(requests.map(() => 201))
          expect(replies.some(replayed)).toBe(false)
          // Each answer is its own transaction, as its GET shows it (the balances are checked in the list below).
          for (const reply of replies.slice(0, 6)) {
            const read = yield* call("GET", `/api/points/transactions/${reply.body.id}`, { token })
            expect(read.text).toBe(reply.text)
          }
          const account = yield* call("GET", `/api/users/${userId}/points-account`, { token })
          expect(account.body.balance).toBe(100 + 40 * 10 - 8 - 6 * 2)
          // The list is in ledger order, page after page: each balance follows from the one before (by id, the
          // order requests arrived in, it did not).
          const listed: Array<{ id: string; type: string; amount: number; balance_after: number }> = []
          let cursor: string | null = null
          do {
            const page: { body: { data: typeof listed; next_cursor: string | null } } = yield* call(
              "GET",
              `/api/points/transactions?user_id=${userId}&limit=7${cursor === null ? "" : `&cursor=${cursor}`}`,
              { token },
            )
            listed.push(...page.body.data)
            cursor = page.body.next_cursor
            // A cursor names the page's last transaction by its id, and carries what its read saw sealed: the
            // log position it is ordered by and the database's transaction numbers count every partner's
            // writes, and are not shown.
            if (cursor !== null) {
              const [named, sealed, ...more] = Buffer.from(cursor, "base64url").toString().split(";")
              expect(named).toBe(`transactions:${page.body.data.at(-1)?.id}`)
              expect(sealed).toMatch(/^[A-Za-z0-9_-]{40,}$/)
              expect(more).toEqual([])
            }
          } while (cursor !== null)
          expect(listed).toHaveLength(49 + 6)
          listed.reduce((balance, row) => {
            const credit = row.type === "add" || row.type === "order_refund"
            expect(row.balance_after).toBe(balance + (credit ? row.amount : -row.amount))
            return row.balance_after
          }, 0)
          const retries = yield* Effect.forEach(requests, send, { concurrency: "unbounded" })
          expect(retries.every(replayed)).toBe(true)
          expect(retries.map((reply) => reply.text)).toEqual(replies.map((reply) => reply.text))
        }),
    )

    it.effect("does not record a 422: the same key executes again once the balance allows it", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const userId = yield* withActivation(activeUser(token))
        expect(
          (yield* call("POST", "/api/points/add", { token, json: add(userId, 10, "seed") })).status,
        ).toBe(201)
        const headers = { "idempotency-key": "subtract-key" }
        const subtract = { token, json: add(userId, 50, "spend-1"), headers }
        const refused = yield* call("POST", "/api/points/subtract", subtract)
        expect(refused.status).toBe(422)
        expect(refused.body.errors[0].code).toBe("LE2002")
        const again = yield* call("POST", "/api/points/subtract", subtract)
        expect(again.status).toBe(422)
        expect(replayed(again)).toBe(false)

        expect(
          (yield* call("POST", "/api/points/add", { token, json: add(userId, 100, "top-up") })).status,
        ).toBe(201)
        const done = yield* call("POST", "/api/points/subtract", subtract)
        expect(done.status).toBe(201)
        expect(replayed(done)).toBe(false)
        expect(done.body).toMatchObject({ type: "subtract", amount: 50, balance_after: 60 })
        const replay = yield* call("POST", "/api/points/subtract", subtract)
        expect(replay.status).toBe(201)
        expect(replayed(replay)).toBe(true)
        expect(replay.text).toBe(done.text)
        const account = yield* call("GET", `/api/users/${userId}/points-account`, { token })
        expect(account.body.balance).toBe(60)
      }),
    )

    it.effect("records a 409 and a 404, and replays them after the condition changed", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const user = yield* call("POST", "/api/users", {
          token,
          json: { partner_user_id: "p-409", email: "ada@example.com" },
        })
        expect(user.body.status).toBe("processing")
        const early = { token, json: add(user.body.id, 5, "early"), headers: { "idempotency-key": "early" } }
        const refused = yield* call("POST", "/api/points/add", early)
        expect(refused.status).toBe(409)
        expect(refused.body.errors[0].code).toBe("LE0001")

        yield* withActivation(
          eventually(
            call("GET", `/api/users/${user.body.id}`, { token }),
            (reply) => reply.body?.status === "active",
          ),
        )
        const replay = yield* call("POST", "/api/points/add", early)
        expect(replay.status).toBe(409)
        expect(replayed(replay)).toBe(true)
        expect(replay.text).toBe(refused.text)
        // Its own request id, not the recorded one.
        expect(replay.headers.get("x-request-id")).not.toBe(refused.headers.get("x-request-id"))
        // The condition did change: the same request under a new key executes.
        const fresh = yield* call("POST", "/api/points/add", {
          ...early,
          headers: { "idempotency-key": "later" },
        })
        expect(fresh.status).toBe(201)

        const ghost = {
          token,
          json: add(uuidV7(), 5, "ghost"),
          headers: { "idempotency-key": "ghost" },
        }
        const missing = yield* call("POST", "/api/points/add", ghost)
        expect(missing.status).toBe(404)
        expect(missing.body.errors[0].code).toBe("LE0002")
        const missingAgain = yield* call("POST", "/api/points/add", ghost)
        expect(missingAgain.status).toBe(404)
        expect(replayed(missingAgain)).toBe(true)
        expect(missingAgain.text).toBe(missing.text)
      }),
    )

    it.effect(
      "records a body refused by the schema (or not JSON) under its key: a retry replays the 400, another body is IK1001",
      () =>
        Effect.gen(function* () {
          const { token } = yield* newPartner()
          const userId = yield* withActivation(activeUser(token))
          const headers = { "idempotency-key": "refused-body" }
          const refused = yield* call("POST", "/api/points/add", {
            token,
            json: add(userId, 0, "rb-1"),
            headers,
          })
          expect(refused.status).toBe(400)
          expect(refused.body.errors[0].code).toBe("GH1006")
          expect(replayed(refused)).toBe(false)
          // The same request again: the recorded 400, byte for byte (its error ids included).
          const again = yield* call("POST", "/api/points/add", {
            token,
            json: add(userId, 0, "rb-1"),
            headers,
          })
          expect(again.status).toBe(400)
          expect(replayed(again)).toBe(true)
          expect(again.text).toBe(refused.text)
          // A corrected body under the same key is another request: it used to execute (201).
          const corrected = yield* call("POST", "/api/points/add", {
            token,
            json: add(userId, 5, "rb-1"),
            headers,
          })
          expect(corrected.status).toBe(422)
          expect(corrected.body.errors[0].code).toBe("IK1001")
          const account = yield* call("GET", `/api/users/${userId}/points-account`, { token })
          expect(account.status).toBe(404)

          // A body that is not JSON, and Create order (which requires a key) with no items: recorded the same way.
          const notJson = {
            token,
            body: "{bad",
            headers: { "content-type": "application/json", "idempotency-key": "refused-json" },
          }
          const first = yield* call("POST", "/api/points/add", notJson)
          expect(first.status).toBe(400)
          const second = yield* call("POST", "/api/points/add", notJson)
          expect(replayed(second)).toBe(true)
          expect(second.text).toBe(first.text)
          const orderHeaders = { "idempotency-key": "refused-order" }
          const noItems = { user_id: userId, reference_id: "ro-1", items: [] }
          expect(
            (yield* call("POST", "/api/orders", { token, json: noItems, headers: orderHeaders })).status,
          ).toBe(400)
          const placed = yield* call("POST", "/api/orders", {
            token,
            json: { ...noItems, items: [{ sku: "A", quantity: 1, points: 1 }] },
            headers: orderHeaders,
          })
          expect(placed.status).toBe(422)
          expect(placed.body.errors[0].code).toBe("IK1001")
          const orders = yield* call("GET", `/api/orders?user_id=${userId}`, { token })
          expect(orders.body.data).toEqual([])

          // A bad key, or none where one is required, is reported beside the body's problems.
          const bothBad = yield* call("POST", "/api/users", {
            token,
            json: { partner_user_id: "both", email: 5 },
            headers: { "idempotency-key": "" },
          })
          expect(bothBad.body.errors.map((entry: { message: string }) => entry.message)).toEqual([
            "email must be a string",
            "Idempotency-Key must not be empty",
          ])
          const noKey = yield* call("POST", "/api/orders", {
            token,
            json: { ...noItems, reference_id: "ro-2" },
          })
          expect(noKey.status).toBe(400)
          expect(noKey.body.errors.map((entry: { code: string }) => entry.code)).toEqual(["GH1006", "IK1003"])
          // Without a key nothing is recorded: each refusal is answered anew.
          const bare = yield* call("POST", "/api/points/add", { token, json: add(userId, 0, "rb-2") })
          const bareAgain = yield* call("POST", "/api/points/add", { token, json: add(userId, 0, "rb-2") })
          expect(replayed(bareAgain)).toBe(false)
          expect(bareAgain.body.errors[0].id).not.toBe(bare.body.errors[0].id)
        }),
    )

    it.effect(
      "records nothing under the key of a request whose connection dropped mid-body: its retry runs",
      () =>
        Effect.gen(function* () {
          const { token } = yield* newPartner()
          const userId = yield* withActivation(activeUser(token))
          const base = yield* baseUrl
          const inFlight = metricNow("http_requests_in_flight")
          // Through the platform (Create user) and through the direct write path (Add points), which hands
          // a request whose client went away to the platform.
          const cases = [
            { path: "/api/users", json: { partner_user_id: "dropped-1", email: "drop@example.com" } },
            { path: "/api/points/add", json: add(userId, 5, "dropped-add") },
          ]
          for (const { path, json } of cases) {
            const body = JSON.stringify(json)
            const key = `dropped-${uuidV7()}`
            // The head, then the connection is gone before the body (a network failure, the retry's very case).
            const dropped = yield* heldRequest(
              base,
              [
                `POST ${path} HTTP/1.1`,
                "Host: localhost",
                `Authorization: Bearer ${token}`,
                "Content-Type: application/json",
                `Idempotency-Key: ${key}`,
                `Content-Length: ${body.length}`,
                "",
                "",
              ].join("\r\n"),
              0,
            )
            yield* eventually(inFlight, (count) => count >= 2)
            dropped.close()
            // Once the server has ended that request, the retry with the whole body runs: 201, not a replay.
            yield* eventually(inFlight, (count) => count <= 1)
            const retry = yield* call("POST", path, { token, json, headers: { "idempotency-key": key } })
            expect(retry.status).toBe(201)
            expect(replayed(retry)).toBe(false)
          }
        }).pipe(Effect.scoped),
    )

    it.effect(
      "refuses an Idempotency-Key header sent twice (Node joins them into one value) and executes nothing",
      () =>
        Effect.gen(function* () {
          const { token } = yield* newPartner()
          const userId = yield* withActivation(activeUser(token))
          const base = yield* baseUrl
          const reply = yield* nodeRequest(`${base}/api/points/add`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${token}`,
              "content-type": "application/json",
              "idempotency-key": ["dupA", "dupB"],
            },
            chunks: [JSON.stringify(add(userId, 3, "dup-1"))],
          })
          expect(reply.status).toBe(400)
          expect(reply.body.errors[0]).toMatchObject({
            code: "GH1006",
            message: "Idempotency-Key must be sent once",
          })
          const account = yield* call("GET", `/api/users/${userId}/points-account`, { token })
          expect(account.status).toBe(404)
        }),
    )

    it.effect("refuses an empty, too long or non-printable key with 400 GH1006 and executes nothing", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const userId = yield* withActivation(activeUser(token))
        for (const key of ["", '""', "k".repeat(256), "a\tb", "caf\u00e9"]) {
          const reply = yield* call("POST", "/api/points/add", {
            token,
            json: add(userId, 1, "bad-key"),
            headers: { "idempotency-key": key },
          })
          expect(reply.status, JSON.stringify(key)).toBe(400)
          expect(reply.body.errors[0].code).toBe("GH1006")
          expect(reply.body.errors[0].message).toContain("Idempotency-Key")
        }
        const found = yield* call("GET", "/api/points/transactions?reference_id=bad-key", { token })
        expect(found.body.data).toEqual([])
        // The longest allowed key (255 printable characters) is fine.
        const longest = yield* call("POST", "/api/points/add", {
          token,
          json: add(userId, 1, "long-key"),
          headers: { "idempotency-key": "k".repeat(255) },
        })
        expect(longest.status).toBe(201)
      }),
    )
  },
)

// Three seconds, not one: the IK1001 check within the lifetime must not race its end on a loaded machine.
layer(testServer({ idempotencyTtlSeconds: 3 }), { timeout: "120 seconds", excludeTestServices: true })(
  "Idempotency-Key lifetime",
  (it) => {
    it.effect("executes a key anew once its lifetime (IDEMPOTENCY_TTL_SECONDS) is over", () =>
      Effect.gen(function* () {
        const { token } = yield* newPartner()
        const userId = yield* activeUser(token)
        const headers = { "idempotency-key": "short-lived" }
        const first = yield* call("POST", "/api/points/add", {
          token,
          json: add(userId, 5, "life-1"),
          headers,
        })
        expect(first.status).toBe(201)
        const other = { token, json: add(userId, 6, "life-2"), headers }
        // Within its lifetime the key belongs to the first request: another body is IK1001 (not recorded).
        const reused = yield* call("POST", "/api/points/add", other)
        expect(reused.status).toBe(422)
        expect(reused.body.errors[0].code).toBe("IK1001")
        const later = yield* eventually(
          call("POST", "/api/points/add", other),
          (reply) => reply.status !== 422,
          10,
        )
        expect(later.status).toBe(201)
        expect(replayed(later)).toBe(false)
        expect(later.body).toMatchObject({ amount: 6, reference_id: "life-2", balance_after: 11 })
        const account = yield* call("GET", `/api/users/${userId}/points-account`, { token })
        expect(account.body.balance).toBe(11)
      }),
    )
  },
)

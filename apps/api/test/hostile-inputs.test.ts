import { describe, expect, layer } from "@effect/vitest"
import { type ErrorCode, WebhookEndpoint } from "@points/domain"
import { Effect } from "effect"
import { databaseDigest, errorCodesServer, TheWorld, type World } from "./error-codes.fixtures.js"
import { ADMIN_TOKEN, call, type Reply } from "./harness.js"

// What an audit sent the running server to break it: unpaired surrogates and NUL characters (which
// PostgreSQL refuses), deeply nested JSON (which once overflowed the stack while an error message was being
// written), arrays of 150,000 elements (validated and reported one by one), bodies that are not objects,
// impossible or out-of-range timestamps, 101 emoji in a 200-character field. Each row asserts the status, the
// code and message of every entry (so their number too) and, for a write, that nothing was written.

/** Who sends a request. */
type As = "partner" | "admin" | "nobody"

interface Req {
  readonly method: string
  readonly path: string
  readonly as?: As
  /** A JSON value, sent as JSON.stringify writes it (a lone surrogate as `\ud800`, NUL as `\u0000`). */
  readonly json?: unknown
  /** A raw body, sent as `application/json`. */
  readonly raw?: string
  readonly headers?: Readonly<Record<string, string>>
}

interface Row {
  readonly when: string
  readonly request: (world: World) => Req
  /** Every entry's message, in order; each entry is GH1006 unless `code` says otherwise. */
  readonly messages: ReadonlyArray<string>
  readonly code?: ErrorCode
}

let serial = 0
const fresh = (prefix: string) => `${prefix}-${++serial}-${Math.random().toString(36).slice(2, 8)}`

const post = (path: string, json: unknown, as: As = "partner"): Req => ({
  method: "POST",
  path,
  as,
  json,
  headers: { "idempotency-key": fresh("key") },
})
const patch = (path: string, json: unknown, as: As = "partner"): Req => ({ method: "PATCH", path, as, json })
const get = (path: string, as: As = "partner"): Req => ({ method: "GET", path, as })
const raw = (method: string, path: string, text: string): Req => ({
  method,
  path,
  raw: text,
  headers: { "idempotency-key": fresh("key") },
})

const move = (userId: unknown, fields: Record<string, unknown> = {}) => ({
  transaction: { user_id: userId, amount: 1, reference_id: fresh("ref"), ...fields },
})
const item = (fields: Record<string, unknown> = {}) => ({ sku: "MUG", quantity: 1, points: 1, ...fields })
const order = (userId: unknown, fields: Record<string, unknown> = {}) => ({
  user_id: userId,
  reference_id: fresh("order"),
  items: [item()],
  ...fields,
})
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`

const lone = "\ud800"
const nul = "\u0000"
const hooks = "/api/webhooks/endpoints"
const eventTypes = WebhookEndpoint.publicEventTypes.join(", ")
const notObject = "invalid params: the body must be a JSON object"
const badLimit = "limit must be an integer from 1 to 100"
const outOfRange = "must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z"
const impossible = "must be a real date and time, e.g. 2025-01-31T12:00:00Z"

const rows: ReadonlyArray<Row> = [
  // Unpaired surrogates: PostgreSQL refuses them in jsonb (a 500 before).
  {
    when: "an add's reference_id and description hold a lone surrogate",
    request: (w) => post("/api/points/add", move(w.funded, { reference_id: `r-${lone}`, description: lone })),
    messages: [
      "transaction.reference_id must be valid Unicode text",
      "transaction.description must be valid Unicode text",
    ],
  },
  {
    when: "a subtract's reference_id holds a lone low surrogate",
    request: (w) => post("/api/points/subtract", move(w.funded, { reference_id: "r-\udc00x" })),
    messages: ["transaction.reference_id must be valid Unicode text"],
  },
  {
    when: "every text of a new user holds a lone surrogate",
    request: () => post("/api/users", { partner_user_id: `p${lone}`, email: `a${lone}@b`, name: lone }),
    messages: [
      "partner_user_id must be valid Unicode text",
      "email must be valid Unicode text",
      "name must be valid Unicode text",
    ],
  },
  {
    when: "an update's email and name hold a lone surrogate",
    request: (w) => patch(`/api/users/${w.funded}`, { email: `a${lone}@b`, name: lone }),
    messages: ["email must be valid Unicode text", "name must be valid Unicode text"],
  },
  {
    when: "an order's reference_id, sku and item name hold a lone surrogate",
    request: (w) =>
      post("/api/orders", order(w.funded, { reference_id: lone, items: [item({ sku: lone, name: lone })] })),
    messages: [
      "reference_id must be valid Unicode text",
      "items.0.sku must be valid Unicode text",
      "items.0.name must be valid Unicode text",
    ],
  },
  {
    when: "a new webhook endpoint's url and description hold a lone surrogate",
    request: () => post(hooks, { url: `https://hooks.example.com/${lone}`, description: lone }),
    messages: ["url must be valid Unicode text", "description must be valid Unicode text"],
  },
  {
    when: "an endpoint update's url and description hold a lone surrogate",
    request: (w) =>
      patch(`${hooks}/${w.endpointOfA}`, { url: `https://hooks.example.com/${lone}`, description: lone }),
    messages: ["url must be valid Unicode text", "description must be valid Unicode text"],
  },
  {
    when: "a partner's name holds a lone surrogate",
    request: () => post("/admin/api/partners", { name: lone }, "admin"),
    messages: ["name must be valid Unicode text"],
  },
  {
    when: "a credential's name holds a lone surrogate",
    request: (w) => post(`/admin/api/partners/${w.adminPartner}/clients`, { name: lone }, "admin"),
    messages: ["name must be valid Unicode text"],
  },
  // Names an operator gives: a line break or an escape would forge lines or colours where they are printed.
  {
    when: "a partner's name holds a line break",
    request: () =>
      post(
        "/admin/api/partners",
        { name: "Evil\nid          00000000-0000-0000-0000-000000000000" },
        "admin",
      ),
    messages: ["name must not contain control characters (line breaks, tabs, escapes, direction marks)"],
  },
  {
    when: "a partner's name is blank",
    request: () => post("/admin/api/partners", { name: "  \u00a0 " }, "admin"),
    messages: ["name must not be blank"],
  },
  {
    when: "a credential's name holds a terminal escape",
    request: (w) =>
      post(`/admin/api/partners/${w.adminPartner}/clients`, { name: "Red\u001b[31mX\u001b[0m" }, "admin"),
    messages: ["name must not contain control characters (line breaks, tabs, escapes, direction marks)"],
  },

  // NUL characters: refused everywhere (DESIGN.md section 2), ids and filters included (a 404 before).
  {
    when: "an add's user_id holds a NUL character",
    request: () => post("/api/points/add", move(`a${nul}b`)),
    messages: ["transaction.user_id must not contain NUL characters"],
  },
  {
    when: "a subtract's user_id holds a NUL character",
    request: () => post("/api/points/subtract", move(`a${nul}b`)),
    messages: ["transaction.user_id must not contain NUL characters"],
  },
  // ... in fields the endpoint ignores too: "no NUL characters anywhere".
  {
    when: "a user's unknown field, an unknown nested one and a field name hold NUL characters",
    request: () =>
      post("/api/users", {
        partner_user_id: fresh("nul"),
        email: "nul@example.com",
        note: `a${nul}b`,
        extra: { deep: ["ok", `${nul}`], [`a${nul}b`]: 1 },
        [`x${nul}`]: true,
      }),
    messages: [
      "invalid params: the body must not have a field name that contains NUL characters",
      "note must not contain NUL characters",
      "extra must not have a field name that contains NUL characters",
      "extra.deep.1 must not contain NUL characters",
    ],
  },
  {
    when: "an add's unknown field holds a NUL beside a known field's own NUL (said once)",
    request: () => post("/api/points/add", move(`a${nul}b`, { memo: `${nul}` })),
    messages: [
      "transaction.user_id must not contain NUL characters",
      "transaction.memo must not contain NUL characters",
    ],
  },
  {
    when: "an order's unknown item field and an unknown field name hold lone surrogates",
    request: () =>
      post(
        "/api/orders",
        order("01890a5d-ac96-774b-bcce-b302099a8057", { items: [item({ gift: lone })], [lone]: 1 }),
      ),
    messages: [
      "invalid params: the body must not have a field name that is not valid Unicode text",
      "items.0.gift must be valid Unicode text",
    ],
  },
  {
    when: "an add's user_id is not a string (LE1001, as published)",
    request: () => post("/api/points/add", move(5)),
    messages: ["transaction.user_id must be a string"],
    code: "LE1001",
  },
  {
    when: "an order's user_id holds a NUL character",
    request: () => post("/api/orders", order(`a${nul}b`)),
    messages: ["user_id must not contain NUL characters"],
  },
  {
    when: "a replay's event id holds a NUL character",
    request: (w) => post(`${hooks}/${w.endpointOfA}/replay`, { event_ids: [`a${nul}b`] }),
    messages: ["event_ids.0 must not contain NUL characters"],
  },
  {
    when: "the filters of Find transactions hold NUL characters",
    request: () => get("/api/points/transactions?reference_id=a%00b&user_id=a%00b"),
    messages: ["reference_id must not contain NUL characters", "user_id must not contain NUL characters"],
  },
  {
    when: "the partner_user_id filter holds a NUL character",
    request: () => get("/api/users?partner_user_id=a%00b"),
    messages: ["partner_user_id must not contain NUL characters"],
  },
  {
    when: "a reference_id filter is empty (no row can match: a 400, not an empty page)",
    request: () => get("/api/orders?reference_id=&user_id=u"),
    messages: ["reference_id must not be empty"],
  },
  {
    when: "a reference_id filter is longer than the field",
    request: () => get(`/api/points/transactions?reference_id=${"r".repeat(256)}`),
    messages: ["reference_id must be at most 255 characters"],
  },
  {
    when: "a partner_user_id filter is longer than the field",
    request: () => get(`/api/users?partner_user_id=${"p".repeat(256)}`),
    messages: ["partner_user_id must be at most 255 characters"],
  },
  {
    when: "the filters of Find orders and the cursor hold NUL characters",
    request: () => get("/api/orders?reference_id=%00&user_id=%00&cursor=%00"),
    messages: [
      "reference_id must not contain NUL characters",
      "user_id must not contain NUL characters",
      "cursor must not contain NUL characters",
    ],
  },

  // Deeply nested JSON in a field that fails: the value is never formatted (a stack overflow, 500, before).
  {
    when: "an amount is an array nested 2,500 deep",
    request: (w) =>
      raw(
        "POST",
        "/api/points/add",
        `{"transaction":{"user_id":"${w.funded}","amount":${nested(2500)},"reference_id":"r"}}`,
      ),
    messages: ["transaction.amount must be a number"],
  },
  {
    when: "the body of Create user is an array nested 3,000 deep",
    request: () => raw("POST", "/api/users", nested(3000)),
    messages: [notObject],
  },
  {
    when: "an item's points are an array nested 3,000 deep",
    request: (w) =>
      raw(
        "POST",
        "/api/orders",
        `{"user_id":"${w.funded}","reference_id":"r",` +
          `"items":[{"sku":"MUG","quantity":1,"points":${nested(3000)}}]}`,
      ),
    messages: ["items.0.points must be a number"],
  },

  {
    when: "a token request's grant_type (JSON) is an array nested 3,000 deep",
    request: () => ({
      ...raw(
        "POST",
        "/api/oauth/token",
        `{"grant_type":${nested(3000)},"client_id":"c","client_secret":"s"}`,
      ),
      as: "nobody",
    }),
    messages: ["grant_type must be a string"],
  },
  {
    when: "a revocation's token (JSON) is an array nested 3,000 deep and its client_id holds a NUL",
    request: () => ({
      ...raw(
        "POST",
        "/api/oauth/revoke",
        `{"token":${nested(3000)},"client_id":"a\\u0000b","client_secret":"s"}`,
      ),
      as: "nobody",
    }),
    messages: ["token must be a string", "client_id must not contain NUL characters"],
  },

  {
    when: "a transactions cursor holds a number past the bigint range (it was a log position)",
    request: () => ({ method: "GET", path: "/api/points/transactions?cursor=OTk5OTk5OTk5OTk5OTk5OTk5OQ" }),
    messages: ["cursor is not a valid cursor"],
  },

  // Over-long arrays: one entry, no element checked (seconds and megabytes of answer before).
  {
    when: "event_types holds 10,000 numbers",
    request: () => post(hooks, { url: "https://hooks.example.com/", event_types: Array(10_000).fill(1) }),
    messages: ["event_types must have at most 100 items"],
  },
  {
    when: "items holds 150,000 numbers",
    request: (w) => post("/api/orders", order(w.funded, { items: Array(150_000).fill(1) })),
    messages: ["items must hold 1 to 100 items"],
  },
  {
    when: "event_ids names 1,001 events",
    request: (w) =>
      post(`${hooks}/${w.endpointOfA}/replay`, {
        event_ids: Array.from({ length: 1001 }, (_, index) => `e-${index}`),
      }),
    messages: ["event_ids must name 1 to 1000 events"],
  },
  {
    when: "100 items are invalid in 4 fields each (the answer stops at 100 entries)",
    request: (w) =>
      post(
        "/api/orders",
        order(w.funded, { items: Array(100).fill({ sku: "", name: 5, quantity: 0, points: 0 }) }),
      ),
    messages: Array.from({ length: 25 }, (_, index) => [
      `items.${index}.sku must not be empty`,
      `items.${index}.name must be a string or null`,
      `items.${index}.quantity must be an integer between 1 and 1000`,
      `items.${index}.points must be an integer between 1 and 1000000000`,
    ]).flat(),
  },

  // Bodies that are not a JSON object: said so, without a schema's internal name.
  ...[
    ["POST", "/api/users", "[]"],
    ["POST", "/api/users", "null"],
    ["POST", "/api/users", '"x"'],
    ["POST", "/api/users", ""],
    ["POST", "/api/points/add", "[]"],
    ["POST", "/api/points/subtract", "7"],
    ["POST", "/api/orders", "[]"],
    ["POST", hooks, "null"],
  ].map(
    ([method = "", path = "", text = ""]): Row => ({
      when: `the body of ${method} ${path} is ${text === "" ? "empty" : text}`,
      request: () => raw(method, path, text),
      messages: [notObject],
    }),
  ),
  {
    when: "the body of Update user is an array",
    request: (w) => ({ ...raw("PATCH", `/api/users/${w.funded}`, "[]"), headers: {} }),
    messages: [notObject],
  },
  {
    when: "the body of Update webhook endpoint is a string",
    request: (w) => ({ ...raw("PATCH", `${hooks}/${w.endpointOfA}`, '"x"'), headers: {} }),
    messages: [notObject],
  },
  {
    when: "the body of Replay is null",
    request: (w) => raw("POST", `${hooks}/${w.endpointOfA}/replay`, "null"),
    messages: [notObject],
  },

  // One entry per problem, naming the field, never "must be null" beside "must be a string".
  {
    when: "a user's name is a number",
    request: () => post("/api/users", { partner_user_id: fresh("p"), email: "a@b.example", name: 5 }),
    messages: ["name must be a string or null"],
  },
  {
    when: "a user's name is over 200 characters",
    request: () =>
      post("/api/users", { partner_user_id: fresh("p"), email: "a@b.example", name: "n".repeat(201) }),
    messages: ["name must be at most 200 characters"],
  },
  {
    when: "a user's name is 201 emoji",
    request: () =>
      post("/api/users", { partner_user_id: fresh("p"), email: "a@b.example", name: "😀".repeat(201) }),
    messages: ["name must be at most 200 characters"],
  },
  {
    when: "an endpoint's description is a number",
    request: () => post(hooks, { url: "https://hooks.example.com/", description: 5 }),
    messages: ["description must be a string or null"],
  },
  {
    when: "an item's name is a number",
    request: (w) => post("/api/orders", order(w.funded, { items: [item({ name: true })] })),
    messages: ["items.0.name must be a string or null"],
  },
  {
    when: "a credential's name is a number",
    request: (w) => post(`/admin/api/partners/${w.adminPartner}/clients`, { name: 5 }, "admin"),
    messages: ["name must be a string or null"],
  },
  {
    when: "the status filter is none of the statuses",
    request: () => get("/api/orders?status=bogus"),
    messages: ["status must be one of pending, processing, completed, failed, cancelled"],
  },
  {
    when: "the type filter is none of the event types",
    request: () => get("/api/events?type=bogus"),
    messages: [`type must be one of ${eventTypes}`],
  },
  {
    when: "an event type is unknown",
    request: () => post(hooks, { url: "https://hooks.example.com/", event_types: ["nope"] }),
    messages: [`event_types.0 must be one of ${eventTypes}`],
  },
  {
    when: "an event id is a number",
    request: (w) => post(`${hooks}/${w.endpointOfA}/replay`, { event_ids: [1] }),
    messages: ["event_ids.0 must be a string"],
  },
  { when: "limit is a word", request: () => get("/api/orders?limit=abc"), messages: [badLimit] },
  { when: "limit is hexadecimal", request: () => get("/api/users?limit=0x10"), messages: [badLimit] },
  { when: "limit has an exponent", request: () => get("/api/events?limit=1e1"), messages: [badLimit] },
  { when: "limit is a fraction", request: () => get(`${hooks}?limit=5.0`), messages: [badLimit] },
  {
    when: "limit is given twice, beside a bad status",
    request: () => get("/api/orders?limit=5&limit=6&status=x"),
    messages: [
      "limit must be given once",
      "status must be one of pending, processing, completed, failed, cancelled",
    ],
  },

  // Timestamps PostgreSQL cannot take, and dates that do not exist (a 500, or March 2, before).
  {
    when: "since is in year 0",
    request: () => get("/api/events?since=0000-01-01T00:00:00Z"),
    messages: [`since ${outOfRange}`],
  },
  {
    when: "since is past 9999 in UTC",
    request: () => get("/api/events?since=9999-12-31T23:59:59-14:00"),
    messages: [`since ${outOfRange}`],
  },
  {
    when: "since is February 30",
    request: () => get("/api/events?since=2025-02-30T00:00:00Z"),
    messages: [`since ${impossible}`],
  },
  {
    when: "a replay's until is in year 0",
    request: (w) => post(`${hooks}/${w.endpointOfA}/replay`, { until: "0000-01-01T00:00:00Z" }),
    messages: [`until ${outOfRange}`],
  },
  {
    when: "a replay's since is February 30 and its until 25:00",
    request: (w) =>
      post(`${hooks}/${w.endpointOfA}/replay`, {
        since: "2025-02-30T00:00:00Z",
        until: "2025-03-01T25:00:00Z",
      }),
    messages: [`since ${impossible}`, `until ${impossible}`],
  },
]

const send = (request: Req, world: World) =>
  call(request.method, request.path, {
    ...(request.json === undefined ? {} : { json: request.json }),
    ...(request.raw === undefined ? {} : { body: request.raw }),
    headers: {
      ...(request.raw === undefined ? {} : { "content-type": "application/json" }),
      ...(request.as === "nobody"
        ? {}
        : { authorization: request.as === "admin" ? `Bearer ${ADMIN_TOKEN}` : `Bearer ${world.a.token}` }),
      ...request.headers,
    },
  })

const messagesOf = (reply: Reply): ReadonlyArray<string> =>
  (reply.body?.errors ?? []).map((entry: { message: string }) => entry.message)

layer(errorCodesServer, { timeout: "120 seconds", excludeTestServices: true })(
  "Hostile inputs: one 400 per problem, naming the field, at a bounded cost, nothing written",
  (it) => {
    for (const row of rows) {
      it.effect(`400 when ${row.when}`, () =>
        Effect.gen(function* () {
          const world = yield* TheWorld
          const request = row.request(world)
          const write = request.method !== "GET"
          const before = write ? yield* databaseDigest : ""
          const reply = yield* send(request, world)
          expect(reply.status, reply.text).toBe(400)
          expect(messagesOf(reply)).toEqual(row.messages)
          for (const entry of reply.body.errors) expect(entry.code).toBe(row.code ?? "GH1006")
          // The answer is as large as its entries, whatever was sent.
          expect(reply.text.length).toBeLessThan(200 * (row.messages.length + 1))
          if (write) expect(yield* databaseDigest).toBe(before)
        }),
      )
    }

    describe("Characters are counted as code points", () => {
      it.effect("a name of 200 emoji (400 UTF-16 code units) is accepted as it is", () =>
        Effect.gen(function* () {
          const world = yield* TheWorld
          const name = "😀".repeat(200)
          const reply = yield* send(
            post("/api/users", { partner_user_id: fresh("p"), email: "a@b.example", name }),
            world,
          )
          expect(reply.status, reply.text).toBe(201)
          expect(reply.body.name).toBe(name)
        }),
      )
    })

    describe("Free text may be empty; an identifier or a label may not", () => {
      it.effect("an empty name or description is stored and answered as it was sent", () =>
        Effect.gen(function* () {
          const world = yield* TheWorld
          const sent: ReadonlyArray<readonly [Req, number, (body: Reply["body"]) => unknown]> = [
            [
              post("/api/users", { partner_user_id: fresh("p"), email: "a@b.example", name: "" }),
              201,
              (body) => body.name,
            ],
            [patch(`/api/users/${world.funded}`, { name: "" }), 200, (body) => body.name],
            [
              post("/api/points/add", move(world.funded, { description: "" })),
              201,
              (body) => body.description,
            ],
            [
              post("/api/orders", order(world.funded, { items: [item({ name: "" })] })),
              201,
              (body) => body.items[0].name,
            ],
            [
              post(hooks, { url: "https://hooks.example.com/empty", description: "" }),
              201,
              (body) => body.description,
            ],
          ]
          for (const [request, status, field] of sent) {
            const reply = yield* send(request, world)
            expect(reply.status, `${request.path}: ${reply.text}`).toBe(status)
            expect(field(reply.body), request.path).toBe("")
          }
          const partner = yield* send(post("/admin/api/partners", { name: "" }, "admin"), world)
          expect(partner.status, partner.text).toBe(400)
          expect(messagesOf(partner)).toEqual(["name must not be empty"])
          const reference = yield* send(
            post("/api/points/add", move(world.funded, { reference_id: "" })),
            world,
          )
          expect(messagesOf(reference)).toEqual(["transaction.reference_id must not be empty"])
        }),
      )
    })

    describe("Timestamps and limits that are valid still answer", () => {
      it.effect("since at the edges of the range, leap days and a plain limit", () =>
        Effect.gen(function* () {
          const world = yield* TheWorld
          for (const path of [
            "/api/events?since=0001-01-01T00:00:00Z",
            "/api/events?since=9999-12-31T23:59:59Z",
            "/api/events?since=2024-02-29T12:00:00%2B05:30&limit=007",
          ]) {
            const reply = yield* send(get(path), world)
            expect(reply.status, `${path}: ${reply.text}`).toBe(200)
          }
        }),
      )
    })
  },
)

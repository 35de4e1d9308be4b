// The HTTP benchmark's baseline: the least a server can do for an idempotent Add points on PostgreSQL. Bare
// node:http and a `pg` pool of 10 (the API's default), and per request one transaction: insert the key,
// insert one event (JSONB data), record the response on the key, commit, answer 201 with a JSON body. No
// framework, no authentication, no rate limit, no stream versions, no read models: what is left is HTTP
// parsing, JSON and the database's durable commit, which the API cannot do without.
// Env: DATABASE_URL (required), PORT (required), HOST (127.0.0.1), DATABASE_POOL_SIZE (10).
import { createHash } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { uuidv7 as uuidV7 } from "uuidv7"

const databaseUrl = process.env.DATABASE_URL
const port = Number(process.env.PORT)
if (databaseUrl === undefined || !(Number.isInteger(port) && port > 0 && port < 65_536)) {
  throw new Error("baseline-server needs DATABASE_URL and PORT")
}
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10)

/** Every request acts for this one partner: the baseline has no authentication. */
const PARTNER_ID = "00000000-0000-7000-8000-000000000001"
/** Request bodies are capped as the API caps them. */
const MAX_BODY_BYTES = 1_048_576

const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, application_name: "bench-baseline" })

// The tables keep what the API's keep for this request, without the API's constraints and read models.
await pool.query(`
  CREATE TABLE IF NOT EXISTS idempotency_keys (
    partner_id   uuid NOT NULL,
    key          text NOT NULL,
    fingerprint  text NOT NULL,
    status       integer,
    response     text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partner_id, key)
  );
  CREATE TABLE IF NOT EXISTS events (
    global_position  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id         uuid NOT NULL,
    stream_id        text NOT NULL,
    event_type       text NOT NULL,
    data             jsonb NOT NULL,
    partner_id       uuid NOT NULL,
    idempotency_key  text,
    occurred_at      timestamptz NOT NULL DEFAULT now()
  )`)

class BadRequest extends Error {}

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) request.destroy(new BadRequest("body too large"))
      else chunks.push(chunk)
    })
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const movementOf = (text: string) => {
  const transaction = (JSON.parse(text) as { transaction?: Record<string, unknown> }).transaction
  const { user_id, amount, reference_id } = transaction ?? {}
  if (typeof user_id !== "string" || typeof reference_id !== "string" || !Number.isInteger(amount)) {
    throw new BadRequest("transaction needs user_id, amount and reference_id")
  }
  return { userId: user_id, amount: amount as number, referenceId: reference_id }
}

const answer = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  })
  response.end(text)
}

/** Add points in one transaction: the key, the event, the recorded response. */
const addPoints = async (request: IncomingMessage, response: ServerResponse) => {
  const text = await readBody(request)
  const movement = movementOf(text)
  const header = request.headers["idempotency-key"]
  const key = typeof header === "string" && header !== "" ? header : uuidV7()
  const fingerprint = createHash("sha256").update(`POST /api/points/add ${text}`).digest("hex")
  const transactionId = uuidV7()
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    await client.query("INSERT INTO idempotency_keys (partner_id, key, fingerprint) VALUES ($1, $2, $3)", [
      PARTNER_ID,
      key,
      fingerprint,
    ])
    const data = { transaction_id: transactionId, user_id: movement.userId, amount: movement.amount }
    const inserted = await client.query<{ occurred_at: Date }>(
      `INSERT INTO events (event_id, stream_id, event_type, data, partner_id, idempotency_key)
       VALUES ($1, $2, 'PointsAdded', $3::jsonb, $4, $5) RETURNING occurred_at`,
      [uuidV7(), `ledger-${movement.userId}`, JSON.stringify(data), PARTNER_ID, key],
    )
    const body = {
      id: transactionId,
      user_id: movement.userId,
      type: "add",
      amount: movement.amount,
      reference_id: movement.referenceId,
      created_at: inserted.rows[0]?.occurred_at.toISOString() ?? null,
    }
    await client.query(
      "UPDATE idempotency_keys SET status = 201, response = $3 WHERE partner_id = $1 AND key = $2",
      [PARTNER_ID, key, JSON.stringify(body)],
    )
    await client.query("COMMIT")
    answer(response, 201, body)
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

const server = createServer((request, response) => {
  const path = (request.url ?? "").split("?")[0]
  if (request.method === "GET" && path === "/health") return answer(response, 200, { status: "ok" })
  if (request.method !== "POST" || path !== "/api/points/add")
    return answer(response, 404, { error: "not found" })
  addPoints(request, response).catch((error: unknown) => {
    if (error instanceof BadRequest || error instanceof SyntaxError)
      return answer(response, 400, { error: "bad request" })
    // A unique violation: the key was used before.
    if ((error as { code?: unknown }).code === "23505") return answer(response, 409, { error: "key in use" })
    console.error(error)
    answer(response, 500, { error: "server error" })
  })
})
server.keepAliveTimeout = 60_000
server.listen(port, process.env.HOST ?? "127.0.0.1")

const stop = () => {
  server.close()
  server.closeAllConnections()
  void pool.end().finally(() => process.exit(0))
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)

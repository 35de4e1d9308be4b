import { describe, expect, it } from "@effect/vitest"
import { API_VERSION } from "@points/http-api"
import { contractProblems } from "./contract-conformance.js"

const transaction = {
  id: "0195f5a0-0000-7000-8000-000000000001",
  account_id: "0195f5a0-0000-7000-8000-000000000002",
  user_id: "0195f5a0-0000-7000-8000-000000000003",
  type: "add",
  amount: 10,
  balance_after: 10,
  reference_id: "ref-1",
  description: null,
  order_id: null,
  created_at: "2026-11-21T10:00:00.000Z",
  version: 1,
}

// The headers every answer to an authenticated partner request carries.
const usual = {
  "content-type": "application/json",
  "x-request-id": "r-1",
  "api-version": API_VERSION,
  "ratelimit-policy": '"partner";q=200;w=1',
  ratelimit: '"partner";r=199;t=1',
}

const received = (
  method: string,
  path: string,
  status: number,
  body: unknown,
  headers: Record<string, string | undefined> = {},
) =>
  contractProblems({
    method,
    path,
    status,
    headers: new Headers(
      Object.entries({ ...usual, ...headers }).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    ),
    text: JSON.stringify(body),
  })

const add = (status: number, body: unknown, headers: Record<string, string | undefined> = {}) =>
  received("POST", "/api/points/add", status, body, headers)

const notFound = { errors: [{ id: "x", code: "LE0002", message: "user not found" }] }

// The check every API test's answers pass through (harness.ts): it must refuse what the document does not say.
describe("Responses held to the published OpenAPI document", () => {
  it("accepts an answer its operation documents, with the body and headers it describes", () => {
    expect(add(201, transaction)).toEqual([])
    expect(add(201, transaction, { "idempotent-replayed": "true" })).toEqual([])
    expect(add(404, notFound, { "content-type": "application/json; charset=utf-8" })).toEqual([])
  })

  it("refuses a status the operation does not list", () => {
    const problems = add(418, { errors: [] })
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/POST \/api\/points\/add answered 418, which its document does not list/)
  })

  it("refuses a body the schema refuses, one line per problem", () => {
    const { amount: _, ...withoutAmount } = transaction
    const problems = add(201, { ...withoutAmount, balance_after: "10", extra: true })
    expect(problems.join("\n")).toMatch(/must have required property 'amount'/)
    expect(problems.join("\n")).toMatch(/\/balance_after/)
    expect(problems.join("\n")).toMatch(/must NOT have additional properties/)
  })

  it("refuses an error body that is not the published one, and a media type the operation does not name", () => {
    expect(add(404, { error: "not found" }).length).toBeGreaterThan(0)
    expect(add(201, transaction, { "content-type": "text/html" })).toEqual([
      'POST /api/points/add answered 201 as "text/html", where its document names application/json',
    ])
  })

  it("refuses a required header missing, a header value its schema refuses, and a header the answer does not document", () => {
    expect(add(201, transaction, { "x-request-id": undefined })).toEqual([
      "POST /api/points/add answered 201 without X-Request-Id",
    ])
    expect(add(201, transaction, { "api-version": "1999-01-01" })).toEqual([
      "POST /api/points/add answered 201 with Api-Version: 1999-01-01, which its schema refuses",
    ])
    const tooMany = { errors: [{ id: "x", code: "GH1009", message: "rate limit reached" }] }
    expect(add(429, tooMany)).toEqual(["POST /api/points/add answered 429 without Retry-After"])
    expect(add(429, tooMany, { "retry-after": "1" })).toEqual([])
    expect(
      add(
        422,
        { errors: [{ id: "x", code: "LE2002", message: "insufficient points balance" }] },
        {
          "idempotent-replayed": "true",
        },
      ),
    ).toEqual([
      "POST /api/points/add answered 422 with idempotent-replayed, which its document does not list there",
    ])
  })

  it("finds the operation by the path's template, its query string aside, and leaves undocumented routes alone", () => {
    const path = `/api/points/transactions/${transaction.id}`
    expect(received("GET", `${path}?x=1`, 200, transaction)).toEqual([])
    expect(received("GET", path, 200, { ...transaction, id: 1 })).toHaveLength(1)
    expect(received("GET", "/api/nowhere", 404, { anything: true })).toEqual([])
  })
})

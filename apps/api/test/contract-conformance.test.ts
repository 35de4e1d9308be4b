import { describe, expect, it } from "@effect/vitest"
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

const add = (status: number, body: unknown, contentType = "application/json") =>
  contractProblems({
    method: "POST",
    path: "/api/points/add",
    status,
    contentType,
    text: JSON.stringify(body),
  })

// The check every API test's answers pass through (harness.ts): it must refuse what the document does not say.
describe("Responses held to the published OpenAPI document", () => {
  it("accepts an answer its operation documents, with the body its schema describes", () => {
    expect(add(201, transaction)).toEqual([])
    expect(
      add(
        404,
        { errors: [{ id: "x", code: "LE0002", message: "user not found" }] },
        "application/json; charset=utf-8",
      ),
    ).toEqual([])
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
    expect(add(201, transaction, "text/html")).toEqual([
      'POST /api/points/add answered 201 as "text/html", where its document names application/json',
    ])
  })

  it("finds the operation by the path's template, its query string aside, and leaves undocumented routes alone", () => {
    const get = (path: string, status: number, body: unknown) =>
      contractProblems({
        method: "GET",
        path,
        status,
        contentType: "application/json",
        text: JSON.stringify(body),
      })
    expect(get(`/api/points/transactions/${transaction.id}?x=1`, 200, transaction)).toEqual([])
    expect(get(`/api/points/transactions/${transaction.id}`, 200, { ...transaction, id: 1 }).length).toBe(1)
    expect(get("/api/nowhere", 404, { anything: true })).toEqual([])
  })
})

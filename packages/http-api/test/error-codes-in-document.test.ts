import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import { ERROR_CODES_EXTENSION, errorStatuses, operationErrors, PointsApi } from "../src/index.js"

const spec = OpenApi.fromApi(PointsApi)

interface Response {
  readonly description: string
  readonly [ERROR_CODES_EXTENSION]?: ReadonlyArray<string>
}

interface Operation {
  readonly operationId: string
  readonly parameters?: ReadonlyArray<{ readonly in: string; readonly name: string }>
  readonly responses: Readonly<Record<string, Response>>
}

const operations = Object.entries(spec.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ path, method, operation: operation as Operation })),
)

const operation = (method: string, path: string) => {
  const found = operations.find((candidate) => candidate.method === method && candidate.path === path)
  if (found === undefined) throw new Error(`${method} ${path} is not in the document`)
  return found.operation
}

const codes = (method: string, path: string, status: number) =>
  operation(method, path).responses[String(status)]?.[ERROR_CODES_EXTENSION]

const takesKey = (candidate: Operation) =>
  (candidate.parameters ?? []).some(
    (parameter) => parameter.in === "header" && parameter.name === "idempotency-key",
  )

const isError = (status: string) => (errorStatuses as ReadonlyArray<number>).includes(Number(status))

describe("The error codes of each operation, in the OpenAPI document", () => {
  it("declares the codes of every operation of the contract, each at a status the operation answers", () => {
    expect(Object.keys(operationErrors).sort()).toEqual(
      operations.map(({ operation }) => operation.operationId).sort(),
    )
    for (const { operation: declared } of operations) {
      for (const [status, byCode] of Object.entries(operationErrors[declared.operationId] ?? {})) {
        const response = declared.responses[status]
        expect(response, `${declared.operationId} ${status}`).toBeDefined()
        expect(response?.[ERROR_CODES_EXTENSION]).toEqual(expect.arrayContaining(Object.keys(byCode)))
      }
    }
  })

  it("lists at least one code on every error response, each named in its description", () => {
    for (const { path, method, operation: listed } of operations) {
      for (const [status, response] of Object.entries(listed.responses).filter(([status]) =>
        isError(status),
      )) {
        const listedCodes = response[ERROR_CODES_EXTENSION] ?? []
        expect(listedCodes.length, `${method} ${path} ${status}`).toBeGreaterThan(0)
        for (const code of listedCodes) expect(response.description).toContain(`(${code})`)
        // The idempotency codes only where a key is taken.
        if (!takesKey(listed)) expect(listedCodes).not.toEqual(expect.arrayContaining(["IK1001"]))
        if (!takesKey(listed)) expect(listedCodes).not.toEqual(expect.arrayContaining(["IK1002"]))
      }
    }
  })

  it("lists no code an operation cannot give (the cases an audit found)", () => {
    // No Idempotency-Key applies to a DELETE, nor to the admin API.
    expect(codes("delete", "/api/users/{user_id}", 409)).toEqual(["LE0001", "LE0004"])
    const client = "/admin/api/partners/{partner_id}/clients/{client_id}"
    expect(codes("post", `${client}/rotate-secret`, 409)).toEqual(["LE0004"])
    expect(codes("delete", client, 409)).toEqual(["LE0004"])
    // The token endpoint has no points movement and takes no key; Add points has no grant type.
    expect(codes("post", "/api/oauth/token", 400)).toEqual(["GH1007", "GH1006"])
    expect(codes("post", "/api/points/add", 400)).toEqual(["LE1001", "GH1006"])
    expect(codes("post", "/api/orders", 400)).toEqual(["IK1003", "GH1006"])
    expect(codes("post", "/api/points/add", 409)).toEqual(["LE0001", "LE0004", "LE0006", "IK1002"])
    expect(codes("get", "/api/users", 404)).toEqual(["NN1002"])
  })

  it("says how to retry after a 500 or 503 as the operation allows: with the key, freely, or checking first", () => {
    for (const { path, method, operation: answered } of operations) {
      for (const status of ["500", "503"]) {
        const description = answered.responses[status]?.description ?? ""
        const at = `${method} ${path} ${status}`
        if (takesKey(answered)) {
          expect(description, at).toContain("retry with the same Idempotency-Key")
          continue
        }
        // Nothing replays where no key is taken: the GETs (health and metrics too) and DELETEs need none,
        // and the admin API ignores one.
        expect(description, at).not.toContain("Idempotency-Key (a")
        expect(description, at).not.toContain("replayed")
        if (method === "get" || method === "delete" || method === "patch" || path.startsWith("/api/oauth/")) {
          expect(description, at).toContain("Safe to retry")
        } else {
          expect(path, at).toMatch(/^\/admin\/api\//)
          expect(description, at).toContain("a retry may repeat the write")
          expect(description, at).toContain("list before creating again")
        }
      }
    }
    expect(operation("get", "/health/ready").responses["503"]?.description).toContain("Safe to retry")
    expect(operation("get", "/metrics").responses["500"]?.description).toContain("Safe to retry")
  })
})

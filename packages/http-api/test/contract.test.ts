import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import { WebhookEndpoint } from "@points/domain"
import { Schema } from "effect"
import {
  API_VERSION,
  ApiError,
  ErrorAt,
  errorMeaning,
  operationDocs,
  PointsApi,
  tagDocs,
} from "../src/index.js"

const spec = OpenApi.fromApi(PointsApi)

describe("The HTTP contract", () => {
  it("describes every path of DESIGN.md section 3 in OpenAPI 3.1", () => {
    expect(spec.openapi).toBe("3.1.0")
    expect(Object.keys(spec.paths).sort()).toEqual(
      [
        "/admin/api/partners",
        "/admin/api/partners/{partner_id}",
        "/admin/api/partners/{partner_id}/clients",
        "/admin/api/partners/{partner_id}/clients/{client_id}",
        "/admin/api/partners/{partner_id}/clients/{client_id}/rotate-secret",
        "/api/oauth/revoke",
        "/api/oauth/token",
        "/api/orders",
        "/api/orders/{order_id}",
        "/api/orders/{order_id}/cancel",
        "/api/points/add",
        "/api/points/subtract",
        "/api/points/transactions",
        "/api/points/transactions/{transaction_id}",
        "/api/users",
        "/api/users/{user_id}",
        "/api/users/{user_id}/points-account",
        "/api/events",
        "/api/events/{event_id}",
        "/api/webhooks/endpoints",
        "/api/webhooks/endpoints/{endpoint_id}",
        "/api/webhooks/endpoints/{endpoint_id}/deliveries",
        "/api/webhooks/endpoints/{endpoint_id}/replay",
        "/api/webhooks/endpoints/{endpoint_id}/rotate-secret",
        "/health/live",
        "/health/ready",
        "/metrics",
      ].sort(),
    )
  })

  it("documents each endpoint's error statuses with the published error body", () => {
    const addPoints = spec.paths["/api/points/add"]?.post
    expect(Object.keys(addPoints?.responses ?? {}).sort()).toEqual(
      ["201", "400", "401", "404", "409", "413", "415", "422", "429", "500", "503"].sort(),
    )
    expect(JSON.stringify(addPoints?.responses?.["409"])).toContain("ErrorBody")
  })

  it("documents the Idempotency-Key header and IK1001's 422 on every POST under /api but the token endpoints", () => {
    const posts = Object.entries(spec.paths).flatMap(([path, item]) =>
      item.post !== undefined && path.startsWith("/api/") && !path.startsWith("/api/oauth/")
        ? [{ path, operation: item.post }]
        : [],
    )
    expect(posts).toHaveLength(9)
    for (const { path, operation } of posts) {
      const header = operation.parameters.find(
        (parameter) => parameter.in === "header" && parameter.name === "idempotency-key",
      )
      expect(header, path).toBeDefined()
      // Create order requires the key (400 IK1003 without it); every other POST takes it if sent.
      expect(header?.required, path).toBe(path === "/api/orders")
      expect(header?.description, path).toContain(
        path === "/api/orders" ? "Required: 400 IK1003" : "Optional.",
      )
      expect(Object.keys(operation.responses), path).toContain("422")
    }
  })

  it("documents the events and webhook endpoint operations with their statuses", () => {
    const statuses = (path: string, method: "get" | "post" | "patch" | "delete") =>
      Object.keys(spec.paths[path]?.[method]?.responses ?? {}).sort()
    // Every partner route may answer these (the API declares them once for all); 415 only where a body is
    // taken.
    const common = ["400", "401", "404", "413", "429", "500", "503"]
    expect(statuses("/api/events", "get")).toEqual(["200", ...common].sort())
    expect(statuses("/api/events/{event_id}", "get")).toEqual(["200", ...common].sort())
    const endpoints = "/api/webhooks/endpoints"
    const one = `${endpoints}/{endpoint_id}`
    expect(statuses(endpoints, "post")).toEqual(["201", "409", "415", "422", ...common].sort())
    expect(statuses(endpoints, "get")).toEqual(["200", ...common].sort())
    expect(statuses(one, "get")).toEqual(["200", ...common].sort())
    expect(statuses(one, "patch")).toEqual(["200", "415", ...common].sort())
    expect(statuses(one, "delete")).toEqual(["200", ...common].sort())
    expect(statuses(`${one}/rotate-secret`, "post")).toEqual(["200", "409", "422", ...common].sort())
    // Without authentication there is no 401 nor 429; the admin API has no rate limit, only the limit of
    // wrong admin tokens per caller network.
    expect(statuses("/health/live", "get")).toEqual(["200", "400", "404", "413", "500", "503"])
    expect(statuses("/admin/api/partners", "post")).toEqual([
      "201",
      "400",
      "401",
      "404",
      "413",
      "415",
      "429",
      "500",
      "503",
    ])
    expect(JSON.stringify(spec.paths[endpoints]?.post?.responses?.["201"])).toContain(
      "WebhookEndpointWithSecret",
    )
    expect(JSON.stringify(spec.components.schemas.WebhookEndpointWithSecret)).toContain('"secret"')
    expect(JSON.stringify(spec.paths[one]?.get?.responses?.["200"])).not.toContain('"secret"')
    expect(JSON.stringify(spec.paths["/api/events"]?.get?.responses?.["200"])).toContain("PublicEvent")
    const event = JSON.stringify(spec.components.schemas.OrderEvent)
    for (const field of ['"timestamp"', '"data"', '"order.status_changed"', "#/components/schemas/Order"]) {
      expect(event).toContain(field)
    }
  })

  it("documents every 400 as the published error body alone, and what each error status means", () => {
    expect(JSON.stringify(spec)).not.toContain("HttpApiDecodeError")
    expect(Object.keys(spec.components.schemas)).not.toContain("Issue")
    const operations = Object.values(spec.paths).flatMap((item) => Object.values(item))
    const badRequests = operations.flatMap((operation) => {
      const response = (operation as { responses?: Record<string, unknown> }).responses?.["400"]
      return response === undefined ? [] : [response as { description: string; content: unknown }]
    })
    expect(badRequests.length).toBe(operations.length)
    for (const response of badRequests) {
      expect(response.description.startsWith(`${errorMeaning[400]}: `)).toBe(true)
      expect(response.content).toEqual({
        "application/json": {
          schema: { allOf: [{ $ref: "#/components/schemas/ErrorBody" }], description: response.description },
        },
      })
    }
    const tooMany = spec.paths["/api/points/add"]?.post?.responses?.["429"] as { description: string }
    expect(tooMany.description).toContain("Retry-After")
  })

  it("documents the headers the server sets on each response", () => {
    const responses = Object.entries(spec.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        Object.entries(
          (operation as { responses: Record<string, { headers?: Record<string, unknown> }> }).responses,
        ).map(([status, response]) => ({
          path,
          method,
          status,
          headers: Object.keys(response.headers ?? {}),
        })),
      ),
    )
    const headersAt = (path: string, method: string, status: string) =>
      responses.find((r) => r.path === path && r.method === method && r.status === status)?.headers
    for (const response of responses) {
      expect(response.headers).toEqual(expect.arrayContaining(["X-Request-Id", "Api-Version"]))
      if (response.status === "429" || response.status === "503")
        expect(response.headers).toContain("Retry-After")
    }
    expect(headersAt("/api/points/add", "post", "201")).toEqual(
      expect.arrayContaining(["RateLimit", "RateLimit-Policy", "Idempotent-Replayed"]),
    )
    expect(headersAt("/api/points/add", "post", "401")).toEqual([
      "X-Request-Id",
      "Api-Version",
      "WWW-Authenticate",
    ])
    expect(headersAt("/api/points/add", "post", "422")).not.toContain("Idempotent-Replayed")
    // Answered from the request's head, before any token or client is looked at: no rate-limit headers.
    for (const status of ["413", "415"]) {
      expect(headersAt("/api/oauth/token", "post", status)).not.toContain("RateLimit")
    }
    expect(headersAt("/api/points/add", "post", "415")).not.toContain("RateLimit")
    // A partner's 413 may come after its token was checked (a chunked body found too large): it may carry them.
    expect(headersAt("/api/points/add", "post", "413")).toContain("RateLimit")
    expect(headersAt("/api/oauth/token", "post", "200")).toEqual(
      expect.arrayContaining(["Cache-Control", "Pragma"]),
    )
    expect(headersAt("/admin/api/partners/{partner_id}/clients", "post", "201")).toContain("Cache-Control")
    expect(headersAt("/admin/api/partners", "get", "200")).toEqual(["X-Request-Id", "Api-Version"])
    expect(headersAt("/health/live", "get", "200")).toEqual(["X-Request-Id", "Api-Version"])
    const apiVersion = (spec.components as { headers?: Record<string, { schema: unknown }> }).headers
      ?.ApiVersion
    expect(apiVersion?.schema).toEqual({ type: "string", const: API_VERSION })
  })

  it("describes every tag, names its server, and gives every webhook an operationId", () => {
    const tags = spec.tags as ReadonlyArray<{ readonly name: string; readonly description?: string }>
    expect(tags.map((tag) => tag.name).sort()).toEqual(Object.keys(tagDocs).sort())
    for (const tag of tags) expect(tag.description, tag.name).toBe(tagDocs[tag.name])
    expect(spec.servers).toEqual([{ url: "/", description: "The server this document is served by" }])
    const document = spec as unknown as { readonly webhooks?: Record<string, unknown> }
    const webhooks = Object.entries(document.webhooks ?? {}) as ReadonlyArray<
      readonly [string, { readonly post: { readonly operationId?: string } }]
    >
    expect(webhooks.length).toBeGreaterThan(0)
    for (const [type, item] of webhooks) expect(item.post.operationId).toBe(`webhooks.${type}`)
  })

  it("gives every operation a summary, and says what a 401 means where it is answered", () => {
    const operations = Object.values(spec.paths).flatMap((item) => Object.values(item)) as Array<{
      operationId: string
      summary?: string
      description?: string
      responses: Record<string, { description: string }>
    }>
    expect(operations.map((operation) => operation.operationId).sort()).toEqual(
      Object.keys(operationDocs).sort(),
    )
    for (const operation of operations) {
      expect(operation.summary).toBe(operationDocs[operation.operationId]?.summary)
    }
    const admin = spec.paths["/admin/api/partners"]?.post as { description?: string } | undefined
    expect(admin?.description).toContain("ADMIN_TOKEN")
    const add = spec.paths["/api/points/add"]?.post
    expect(add?.responses?.["401"]?.description).toContain("GH1003")
    expect(add?.responses?.["401"]?.description).not.toContain("GH1001")
    expect(spec.paths["/api/oauth/token"]?.post?.responses?.["401"]?.description).toContain("GH1001")
    const schemes = spec.components.securitySchemes as Record<string, { description?: string }>
    expect(schemes.bearer?.description).toContain("/api/oauth/token")
    expect(schemes.adminToken?.description).toContain("ADMIN_TOKEN")
  })

  it("documents the token endpoints' bodies as a form and as JSON, and what a list's cursor is", () => {
    for (const path of ["/api/oauth/token", "/api/oauth/revoke"]) {
      const body = spec.paths[path]?.post?.requestBody as { content: Record<string, unknown> } | undefined
      const content = body?.content ?? {}
      expect(Object.keys(content).sort()).toEqual(["application/json", "application/x-www-form-urlencoded"])
      expect(content["application/json"]).toEqual(content["application/x-www-form-urlencoded"])
    }
    for (const path of ["/api/users", "/api/points/transactions", "/api/orders", "/api/events"]) {
      const parameters = (spec.paths[path]?.get?.parameters ?? []) as Array<{
        name: string
        description?: string
      }>
      expect(parameters.find((parameter) => parameter.name === "cursor")?.description, path).toContain(
        "next_cursor",
      )
    }
  })

  it("documents Create Token's body as optional (HTTP Basic may come without one), Revoke Token's as required", () => {
    expect(spec.paths["/api/oauth/token"]?.post?.requestBody?.required).toBe(false)
    expect(spec.paths["/api/oauth/revoke"]?.post?.requestBody?.required).toBe(true)
    expect(spec.paths["/api/users"]?.post?.requestBody?.required).toBe(true)
  })

  it("documents every timestamp of a resource (`*_at`, `*_until`, `at`, `timestamp`) as a date-time", () => {
    const components = spec.components.schemas as Record<string, unknown>
    const resolved = (schema: unknown): Record<string, unknown> => {
      const reference = (schema as { $ref?: string }).$ref
      return reference === undefined
        ? (schema as Record<string, unknown>)
        : resolved(components[reference.replace("#/components/schemas/", "")])
    }
    // A nullable timestamp is `anyOf: [timestamp, null]`: each member that is not null is a date-time.
    const formatsOf = (schema: unknown): ReadonlyArray<unknown> => {
      const found = resolved(schema)
      return Array.isArray(found.anyOf)
        ? found.anyOf.flatMap((member) => (resolved(member).type === "null" ? [] : formatsOf(member)))
        : [found.format]
    }
    const timestamps: Array<string> = []
    const walk = (value: unknown, at: string): void => {
      if (typeof value !== "object" || value === null) return
      const properties = (value as { properties?: unknown }).properties
      if (typeof properties === "object" && properties !== null) {
        for (const [name, property] of Object.entries(properties)) {
          // `expires_at` is Unix seconds, as published (DESIGN.md section 2).
          if (!/(^|_)at$|_until$|^timestamp$/.test(name) || name === "expires_at") continue
          timestamps.push(`${at}.${name}`)
          expect(new Set(formatsOf(property)), `${at}.${name}`).toEqual(new Set(["date-time"]))
        }
      }
      for (const [key, inner] of Object.entries(value)) walk(inner, `${at}/${key}`)
    }
    walk(spec, "")
    for (const field of [
      "WebhookDelivery.attempted_at",
      "WebhookDelivery.next_attempt_at",
      "RotatedClientCredential.created_at",
      "RotatedClientCredential.previous_secret_valid_until",
      "ClientCredential.previous_secret_valid_until",
      "{partner_id}/clients/post/responses/201/content/application/json/schema.created_at",
    ]) {
      expect(
        timestamps.some((path) => path.endsWith(field)),
        field,
      ).toBe(true)
    }
  })

  it("describes a replay's selection as the server takes it: `until` alone too", () => {
    const replay = spec.paths["/api/webhooks/endpoints/{endpoint_id}/replay"]?.post
    expect(replay?.description).toContain("`since` and/or `until`")
    expect(replay?.description).not.toContain("optionally `until`")
  })

  it("documents the webhooks sent, one per event type, signed as Standard Webhooks", () => {
    const webhooks = (spec as unknown as { webhooks: Record<string, { post: Record<string, unknown> }> })
      .webhooks
    expect(Object.keys(webhooks)).toEqual([...WebhookEndpoint.publicEventTypes])
    const added = webhooks["points.added"]?.post
    expect(JSON.stringify(added?.requestBody)).toContain("#/components/schemas/PointsEvent")
    expect(((added?.parameters ?? []) as Array<{ name: string }>).map((parameter) => parameter.name)).toEqual(
      ["webhook-id", "webhook-timestamp", "webhook-signature"],
    )
    // Every payload schema named is one the document defines.
    for (const webhook of Object.values(webhooks)) {
      const name = JSON.stringify(webhook.post.requestBody).match(/#\/components\/schemas\/(\w+)/)?.[1]
      expect(Object.keys(spec.components.schemas)).toContain(name)
    }
  })

  it("refers to a resource's component wherever a response repeats it", () => {
    const created = (path: string) => JSON.stringify(spec.paths[path]?.post?.responses?.["201"])
    const referring = (name: string) => `"schema":{"$ref":"#/components/schemas/${name}"}`
    expect(created("/api/points/add")).toContain(referring("Transaction"))
    expect(created("/api/users")).toContain(referring("User"))
    expect(created("/api/orders")).toContain(referring("Order"))
    expect(spec.paths["/api/events/{event_id}"]?.get?.responses?.["200"]?.description).toBe("PublicEvent")
  })

  it("encodes an ApiError as exactly the published body, and decodes it back with its status", () => {
    const error = new ApiError({
      status: 409,
      errors: [{ id: "e1", code: "LE0001", message: "user is already being processed" }],
    })
    const body = Schema.encodeSync(ErrorAt[409])(error)
    expect(body).toEqual({
      errors: [{ id: "e1", code: "LE0001", message: "user is already being processed" }],
    })
    expect(Schema.decodeSync(ErrorAt[409])(body)).toEqual(error)
    expect(Schema.is(ErrorAt[404])(error)).toBe(false)
  })
})

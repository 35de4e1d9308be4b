import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import { encodeCursor, WebhookEndpoint } from "@points/domain"
import { Either, ParseResult, Schema } from "effect"
import {
  boundedArray,
  CreateOrderBody,
  CreateUserBody,
  CreateWebhookEndpointBody,
  GraceSeconds,
  jsonBody,
  Limit,
  MAX_PROBLEMS,
  PathId,
  PointsApi,
  PointsMovementBody,
  pageQuery,
  queryParams,
  ReplayBody,
} from "../src/index.js"

// What the platform makes of a refusal (HttpApiDecodeError formats it with both formatters): every
// problem as `path message`, and the tree text, which must be written without failing.
const refusal = (schema: Schema.Schema.AnyNoContext, input: unknown): ReadonlyArray<string> => {
  const result = Schema.decodeUnknownEither(schema)(input)
  if (Either.isRight(result)) return []
  expect(typeof ParseResult.TreeFormatter.formatErrorSync(result.left)).toBe("string")
  return ParseResult.ArrayFormatter.formatErrorSync(result.left).map((issue) =>
    [issue.path.join("."), issue.message].filter((part) => part !== "").join(" "),
  )
}

const nestedArray = (depth: number): unknown => {
  let value: unknown = []
  for (let level = 0; level < depth; level++) value = [value]
  return value
}

const user = jsonBody(CreateUserBody)
const movement = jsonBody(PointsMovementBody)
const order = jsonBody(CreateOrderBody)
const hook = jsonBody(CreateWebhookEndpointBody)
const replay = jsonBody(ReplayBody)
const orders = queryParams(
  Schema.Struct({ status: Schema.optional(Schema.Literal("pending", "completed")), ...pageQuery("orders") }),
)
const item = { sku: "MUG", quantity: 1, points: 1 }

describe("A JSON body", () => {
  it("that is not an object is refused as such, without a schema's name", () => {
    for (const input of [[], null, "x", 7, undefined, true]) {
      expect(refusal(user, input)).toEqual(["the body must be a JSON object"])
    }
    expect(refusal(user, {})).toEqual(["partner_user_id is required", "email is required"])
  })

  it("reports each invalid field once, in the published wording", () => {
    expect(refusal(user, { partner_user_id: "p", email: "a@b", name: 5 })).toEqual([
      "name must be a string or null",
    ])
    expect(refusal(user, { partner_user_id: "p", email: "a@b", name: "n".repeat(201) })).toEqual([
      "name must be at most 200 characters",
    ])
    expect(refusal(movement, { transaction: { user_id: 5, amount: "1", reference_id: "" } })).toEqual([
      "transaction.user_id must be a string",
      "transaction.amount must be a number",
      "transaction.reference_id must not be empty",
    ])
    expect(refusal(hook, { url: "https://h.example.com/", event_types: ["nope"], enabled: "yes" })).toEqual([
      `event_types.0 must be one of ${WebhookEndpoint.publicEventTypes.join(", ")}`,
      "enabled must be a boolean",
    ])
    expect(refusal(replay, { event_ids: [1] })).toEqual(["event_ids.0 must be a string"])
    expect(refusal(replay, { since: "2025-02-30T00:00:00Z" })).toEqual([
      "since must be a real date and time, e.g. 2025-01-31T12:00:00Z",
    ])
  })

  it("never formats the value sent: a field nested 100,000 deep is one short problem", () => {
    const deep = nestedArray(100_000)
    expect(refusal(movement, { transaction: { user_id: "u", amount: deep, reference_id: "r" } })).toEqual([
      "transaction.amount must be a number",
    ])
    expect(refusal(user, deep)).toEqual(["the body must be a JSON object"])
    expect(refusal(order, { user_id: "u", reference_id: "r", items: [{ ...item, points: deep }] })).toEqual([
      "items.0.points must be a number",
    ])
  })

  it(`reports at most ${MAX_PROBLEMS} problems`, () => {
    const items = Array(100).fill({ sku: "", name: 5, quantity: 0, points: 0 })
    expect(refusal(order, { user_id: "u", reference_id: "r", items })).toHaveLength(MAX_PROBLEMS)
  })

  it("decodes and encodes a valid body (the client SDK sends it through the same schema)", () => {
    const body = { user_id: "u", reference_id: "r", items: [item] }
    const decoded = Schema.decodeUnknownSync(order)(body)
    expect(decoded).toEqual({ ...body, items: [{ ...item, name: null }] })
    expect(Schema.encodeSync(order)(decoded)).toEqual({ ...body, items: [{ ...item, name: null }] })
  })
})

describe("A bounded array", () => {
  it("checks its length before any element: an over-long one costs no element check", () => {
    let checked = 0
    const counted = Schema.Number.pipe(Schema.filter(() => ++checked > 0))
    const bounded = jsonBody(
      Schema.Struct({
        items: boundedArray(counted, { min: 1, max: 100, message: "must hold 1 to 100 items" }),
      }),
    )
    expect(refusal(bounded, { items: Array(150_000).fill("x") })).toEqual(["items must hold 1 to 100 items"])
    expect(refusal(bounded, { items: [] })).toEqual(["items must hold 1 to 100 items"])
    expect(checked).toBe(0)
    expect(refusal(bounded, { items: "x" })).toEqual(["items must be an array"])
    expect(Schema.decodeUnknownSync(bounded)({ items: [1, 2] })).toEqual({ items: [1, 2] })
    expect(checked).toBe(2)
  })

  it("in a body, is one problem of its field beside the others", () => {
    expect(refusal(order, { user_id: 5, reference_id: "r", items: Array(150_000).fill(1) })).toEqual([
      "user_id must be a string",
      "items must hold 1 to 100 items",
    ])
    expect(refusal(hook, { url: "https://h.example.com/", event_types: Array(10_000).fill(1) })).toEqual([
      "event_types must have at most 100 items",
    ])
    expect(refusal(replay, { event_ids: Array(1001).fill("e") })).toEqual([
      "event_ids must name 1 to 1000 events",
    ])
  })
})

describe("Query parameters", () => {
  it("take a limit written as a plain decimal integer from 1 to 100", () => {
    for (const limit of ["1", "20", "100", "007", "0005", "0100", "000000000100", `${"0".repeat(40)}42`]) {
      expect(Schema.decodeUnknownSync(orders)({ limit })).toEqual({ limit: Number(limit) })
    }
    for (const limit of [
      "abc",
      "0",
      "0000",
      "0101",
      "101",
      "0x10",
      "1e1",
      "5.0",
      " 5",
      "+5",
      "-1",
      "",
      "1000000",
      "1000000000000000000000",
      `${"0".repeat(40)}`,
    ]) {
      expect(refusal(orders, { limit }), limit).toEqual(["limit must be an integer from 1 to 100"])
    }
    expect(Schema.encodeSync(Limit)(42)).toBe("42")
  })

  it("take a grace period in whole seconds from 0 to 30 days, leading zeros as they are", () => {
    const grace = queryParams(Schema.Struct({ grace_seconds: GraceSeconds }))
    for (const seconds of ["0", "000", `${"0".repeat(20)}7`, "86400", "2592000"]) {
      expect(Schema.decodeUnknownSync(grace)({ grace_seconds: seconds })).toEqual({
        grace_seconds: Number(seconds),
      })
    }
    for (const seconds of ["-1", "2592001", "1.5", "1e3", "+1", "", " 0", "day"]) {
      expect(refusal(grace, { grace_seconds: seconds }), seconds).toEqual([
        "grace_seconds must be an integer from 0 to 2592000",
      ])
    }
  })

  it("name the allowed values of a choice in one problem", () => {
    expect(refusal(orders, { status: "bogus", limit: "0" })).toEqual([
      "status must be one of pending, completed",
      "limit must be an integer from 1 to 100",
    ])
  })

  it("are each given once; unknown ones are ignored, repeated or not", () => {
    expect(refusal(orders, { limit: ["5", "6"], status: "bogus", other: ["a", "b"] })).toEqual([
      "limit must be given once",
      "status must be one of pending, completed",
    ])
    expect(Schema.decodeUnknownSync(orders)({ status: "pending", other: ["a", "b"] })).toEqual({
      status: "pending",
    })
  })
})

describe("A cursor", () => {
  const id = "01a2014e-b620-72ff-8803-d383bbc69108"

  it("is refused with the other parameters, unless it is one of this list", () => {
    expect(refusal(orders, { status: "bogus", cursor: "bogus" })).toEqual([
      "status must be one of pending, completed",
      "cursor is not a valid cursor",
    ])
    for (const cursor of [
      encodeCursor("transactions", id),
      encodeCursor("orders", id.toUpperCase()),
      "",
      "x",
    ]) {
      expect(refusal(orders, { cursor })).toEqual(["cursor is not a valid cursor"])
    }
    expect(Schema.decodeUnknownSync(orders)({ cursor: encodeCursor("orders", id) })).toEqual({
      cursor: encodeCursor("orders", id),
    })
  })
})

describe("An id", () => {
  const id = "01a2014e-b620-72ff-8803-d383bbc69108"

  it("written as a UUID in upper or mixed case is read as the lower-case id the platform issued", () => {
    const path = Schema.decodeUnknownSync(PathId)
    expect(path(id.toUpperCase())).toBe(id)
    expect(path("01A2014E-b620-72FF-8803-d383bbc69108")).toBe(id)
    // Anything else is left as written, to be named as the unknown id it is.
    expect(path("NOT-A-UUID")).toBe("NOT-A-UUID")
    const body = Schema.decodeUnknownSync(movement)({
      transaction: { user_id: id.toUpperCase(), amount: 1, reference_id: "R-1" },
    })
    expect(body.transaction.user_id).toBe(id)
    expect(Schema.decodeUnknownSync(replay)({ event_ids: [id.toUpperCase()] }).event_ids).toEqual([id])
    expect(refusal(movement, { transaction: { user_id: 5, amount: 1, reference_id: "r" } })).toEqual([
      "transaction.user_id must be a string",
    ])
  })
})

describe("The OpenAPI document", () => {
  const spec = OpenApi.fromApi(PointsApi)
  const schemas: Record<string, unknown> = spec.components.schemas

  it("still documents each body and query parameter with its limits", () => {
    expect(schemas.DisplayName).toMatchObject({ type: "string", maxLength: 200 })
    expect(schemas.DisplayName).not.toHaveProperty("minLength")
    expect(schemas.Label).toMatchObject({ type: "string", minLength: 1, maxLength: 200 })
    expect(schemas.CreateOrder).toMatchObject({
      properties: {
        items: {
          type: "array",
          minItems: 1,
          maxItems: 100,
          items: { $ref: "#/components/schemas/OrderItemInput" },
        },
        reference_id: { type: "string", maxLength: 255 },
      },
    })
    expect(schemas.ReplayWebhookEvents).toMatchObject({
      properties: { event_ids: { type: "array", minItems: 1, maxItems: 1000 }, since: { type: "string" } },
    })
    const parameters = spec.paths["/api/orders"]?.get?.parameters ?? []
    expect(parameters.map((parameter) => parameter.name)).toEqual([
      "reference_id",
      "user_id",
      "status",
      "limit",
      "cursor",
    ])
    // Documented as the integer it is read as (the query string carries it as decimal text).
    expect(parameters.find((parameter) => parameter.name === "limit")?.schema).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 100,
      default: 20,
    })
  })
})

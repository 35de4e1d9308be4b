import * as OpenApi from "@effect/platform/OpenApi"
import { PointsApi } from "@points/http-api"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"

/** The OpenAPI document the server publishes at /openapi.json, generated from the same contract. */
export const publishedDocument = OpenApi.fromApi(PointsApi)

// The whole document is registered as one schema, so that a response's schema is reached by its JSON pointer
// and its `#/components/schemas/...` references resolve against the document. Not strict: the document has
// OpenAPI's own keywords (paths, info) beside the schemas.
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
ajv.addSchema(publishedDocument as object, "openapi")

// A media type without its parameters ("text/plain; version=0.0.4" is text/plain).
const essenceOf = (mediaType: string) => mediaType.split(";")[0]?.trim().toLowerCase() ?? ""

const pointer = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1")

// Literal paths first, so that `/api/points/add` is never read as a value of a `{...}` segment.
const templates = Object.keys(publishedDocument.paths)
  .map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
    literal: !template.includes("{"),
  }))
  .sort((a, b) => Number(b.literal) - Number(a.literal))

interface DocumentedResponse {
  readonly content?: Record<string, unknown>
  readonly headers?: Record<string, { readonly $ref?: string }>
}

interface DocumentedHeader {
  readonly required?: boolean
}

// A header object of the document's components by its reference (not through Ajv: it is not a schema).
const headerAt = (reference: string): DocumentedHeader | undefined => {
  const name = reference.replace("#/components/headers/", "")
  const components = publishedDocument.components as { headers?: Record<string, DocumentedHeader> }
  return components.headers?.[name]
}

// Every header some response documents: one of them on a response that does not document it is a problem too.
const documentedHeaderNames = new Set(
  Object.values(publishedDocument.paths).flatMap((item) =>
    Object.values(item).flatMap((operation) =>
      Object.values(
        (operation as { responses?: Record<string, DocumentedResponse> }).responses ?? {},
      ).flatMap((documented) => Object.keys(documented.headers ?? {}).map((name) => name.toLowerCase())),
    ),
  ),
)

// The headers a response documents: each required one present, each present one valid for its schema, and
// none of the documented ones that this response does not list.
const headerProblemsOf = (
  operation: string,
  response: ReceivedResponse,
  documented: Record<string, { readonly $ref?: string }>,
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const listed = new Set(Object.keys(documented).map((name) => name.toLowerCase()))
  for (const [name, header] of Object.entries(documented)) {
    const at = header.$ref ?? ""
    const definition = headerAt(at)
    const value = response.headers.get(name)
    if (value === null) {
      if (definition?.required === true)
        problems.push(`${operation} answered ${response.status} without ${name}`)
      continue
    }
    const validate = ajv.getSchema(`openapi${at}/schema`)
    if (validate === undefined) problems.push(`${operation}: no schema for the header ${name} at ${at}`)
    else if (!validate(value))
      problems.push(
        `${operation} answered ${response.status} with ${name}: ${value}, which its schema refuses`,
      )
  }
  for (const name of documentedHeaderNames) {
    if (!listed.has(name) && response.headers.get(name) !== null) {
      problems.push(
        `${operation} answered ${response.status} with ${name}, which its document does not list there`,
      )
    }
  }
  return problems
}

/** A response as received, for checking against the published document. */
export interface ReceivedResponse {
  readonly method: string
  /** The request's path, query string included or not. */
  readonly path: string
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

/**
 * What a response does differently from what the published document says its operation answers: a status
 * the operation does not list, a required header missing or a header value refused (or a documented header
 * the response does not list), a media type it does not name, or a body its schema refuses (each refusal a
 * line). Empty when it conforms, and for requests no operation describes (an unknown route, another method).
 */
export const contractProblems = (response: ReceivedResponse): ReadonlyArray<string> => {
  const path = response.path.split("?")[0] ?? ""
  const method = response.method.toLowerCase()
  const found = templates.find(
    ({ template, pattern }) =>
      pattern.test(path) &&
      (publishedDocument.paths as Record<string, Record<string, unknown>>)[template]?.[method] !== undefined,
  )
  if (found === undefined) return []
  const operation = `${response.method.toUpperCase()} ${found.template}`
  const responses = (
    publishedDocument.paths as Record<
      string,
      Record<string, { responses: Record<string, DocumentedResponse> }>
    >
  )[found.template]?.[method]?.responses
  const documented: DocumentedResponse | undefined = responses?.[String(response.status)]
  if (documented === undefined) {
    const listed = Object.keys(responses ?? {}).join(", ")
    return [`${operation} answered ${response.status}, which its document does not list (${listed})`]
  }
  const headerProblems = headerProblemsOf(operation, response, documented.headers ?? {})
  if (headerProblems.length > 0) return headerProblems
  const mediaTypes = Object.keys(documented.content ?? {})
  const documentedAs = new Map(mediaTypes.map((name) => [essenceOf(name), name]))
  if (mediaTypes.length === 0) {
    return response.text === ""
      ? []
      : [`${operation} answered ${response.status} with a body where its document has none`]
  }
  const mediaType = essenceOf(response.headers.get("content-type") ?? "")
  const documentedType = documentedAs.get(mediaType)
  if (documentedType === undefined) {
    return [
      `${operation} answered ${response.status} as "${mediaType}", where its document names ${mediaTypes.join(", ")}`,
    ]
  }
  if (mediaType !== "application/json") return []
  let body: unknown
  try {
    body = JSON.parse(response.text)
  } catch {
    return [`${operation} answered ${response.status} with a body that is not JSON`]
  }
  const schemaAt = [
    "paths",
    found.template,
    method,
    "responses",
    String(response.status),
    "content",
    documentedType,
    "schema",
  ]
  const validate = ajv.getSchema(`openapi#/${schemaAt.map(pointer).join("/")}`)
  if (validate === undefined) return [`${operation}: no schema at ${schemaAt.join(" / ")}`]
  if (validate(body)) return []
  return (validate.errors ?? []).map(
    (error) =>
      `${operation} answered ${response.status} with a body its document refuses: ${error.instancePath || "(body)"} ${error.message ?? ""} ${JSON.stringify(error.params)}`,
  )
}

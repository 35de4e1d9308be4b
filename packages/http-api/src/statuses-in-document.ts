import { entriesOf, isTokenEndpoint, type Json, mapOperations, securedBy } from "./document-json.js"

// The statuses an operation cannot answer, though the API declares them for every operation: 401 without
// authentication, 429 without a rate limit (only partners' requests and the token endpoints have one), 415
// without a body (the media type is checked only where a body is taken).
const impossibleStatuses = (path: string, operation: Json): ReadonlySet<string> => {
  const oauth = isTokenEndpoint(path)
  const partner = securedBy(operation, "bearer")
  const admin = securedBy(operation, "adminToken")
  const impossible = new Set<string>()
  if (!(oauth || partner || admin)) impossible.add("401")
  if (!(oauth || partner)) impossible.add("429")
  if (operation.requestBody === undefined) impossible.add("415")
  return impossible
}

// What a 401 or 415 means depends on how the operation authenticates and what body it takes: the API-wide
// description names every case, an operation's only its own.
const meaningAt = (path: string, operation: Json, status: string): string | undefined => {
  const oauth = isTokenEndpoint(path)
  if (status === "401" && oauth) return "Bad client credentials (GH1001)"
  if (status === "401" && securedBy(operation, "adminToken")) return "A missing or wrong admin token (GH1003)"
  if (status === "401") return "A missing, malformed, unknown, expired or revoked token (GH1003)"
  if (status === "415" && oauth) return "The body is neither form-urlencoded nor JSON (GH1010)"
  if (status === "415") return "The body is not application/json (GH1010)"
  return undefined
}

const describedFor = (path: string, operation: Json, status: string, response: Json): Json => {
  const meaning = meaningAt(path, operation, status)
  if (meaning === undefined) return response
  const content = Object.fromEntries(
    entriesOf(response.content).map(([mediaType, media]) => [
      mediaType,
      { ...media, schema: { ...(media.schema as Json | undefined), description: meaning } },
    ]),
  )
  return { ...response, description: meaning, content }
}

/**
 * An OpenAPI transform of the whole document: each operation lists only the statuses it can answer, 401 and
 * 415 described as they happen there. The
 * errors declared on the whole API (401, 415, 429, ...) are dropped where they cannot happen, so that a
 * health check does not document a 401, nor a GET a 415.
 */
export const statusesAsAnswered = (spec: Json): Json =>
  mapOperations(spec, (path, operation) => {
    const impossible = impossibleStatuses(path, operation)
    const responses = entriesOf(operation.responses)
      .filter(([status]) => !impossible.has(status))
      .map(([status, response]) => [status, describedFor(path, operation, status, response)])
    return { ...operation, responses: Object.fromEntries(responses) }
  })

import { entriesOf, isTokenEndpoint, type Json, mapOperations, securedBy } from "./document-json.js"

// The statuses an operation cannot answer, though the API declares them for every operation: 401 without
// authentication, 429 without a limit (partners' requests and the token endpoints have rate limits, and
// partners' and admin requests a limit of failed authentications per caller network), 415
// without a body (the media type is checked only where a body is taken).
const impossibleStatuses = (path: string, operation: Json): ReadonlySet<string> => {
  const oauth = isTokenEndpoint(path)
  const partner = securedBy(operation, "bearer")
  const admin = securedBy(operation, "adminToken")
  const impossible = new Set<string>()
  if (!(oauth || partner || admin)) impossible.add("401")
  if (!(oauth || partner || admin)) impossible.add("429")
  if (operation.requestBody === undefined) impossible.add("415")
  return impossible
}

/**
 * An OpenAPI transform of the whole document: each operation lists only the statuses it can answer. The
 * errors declared on the whole API (401, 415, 429, ...) are dropped where they cannot happen, so that a
 * health check does not document a 401, nor a GET a 415. (What each status means there, and with which
 * codes, is errorCodesInDocument's.)
 */
export const statusesAsAnswered = (spec: Json): Json =>
  mapOperations(spec, (path, operation) => {
    const impossible = impossibleStatuses(path, operation)
    const responses = entriesOf(operation.responses).filter(([status]) => !impossible.has(status))
    return { ...operation, responses: Object.fromEntries(responses) }
  })

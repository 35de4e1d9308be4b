import { errorMeaning } from "./api-error.js"
import { entriesOf, type Json, mapResponses } from "./document-json.js"

// The platform's own body for a request that fails its schema, and the schemas only it uses.
const PLATFORM_DECODE_ERROR = "#/components/schemas/HttpApiDecodeError"
const PLATFORM_ONLY_SCHEMAS = ["HttpApiDecodeError", "Issue", "PropertyKey"] as const

const isPlatformDecodeError = (schema: unknown) =>
  typeof schema === "object" && schema !== null && (schema as Json).$ref === PLATFORM_DECODE_ERROR

// A 400 as the server answers it: the platform's alternative dropped from each media type's schema, and with
// it the platform's description of the response.
const publishedBadRequest = (response: Json): Json => ({
  ...response,
  description: errorMeaning[400],
  content: Object.fromEntries(
    entriesOf(response.content).map(([mediaType, media]) => {
      const anyOf = (media.schema as Json | undefined)?.anyOf
      const kept = Array.isArray(anyOf) ? anyOf.filter((schema) => !isPlatformDecodeError(schema)) : []
      return [mediaType, kept.length === 1 ? { ...media, schema: kept[0] } : media]
    }),
  ),
})

/**
 * An OpenAPI transform of the whole document: the platform documents every 400 as either its own
 * HttpApiDecodeError body or the operation's errors, but the server answers every schema failure in the
 * published `{ errors: [...] }` body (one entry per invalid field), so each 400 names that body alone and the
 * platform's schemas, then unused, leave the document.
 */
export const schemaFailuresAsPublished = (spec: Json): Json => {
  const paths = mapResponses(spec, (_path, _operation, status, response) =>
    status === "400" ? publishedBadRequest(response) : response,
  ).paths as Json
  const components = (spec.components ?? {}) as Json
  const schemas = { ...(components.schemas as Json | undefined) }
  for (const name of PLATFORM_ONLY_SCHEMAS) delete schemas[name]
  // Dropped only when nothing left refers to them (else the document would point at nothing).
  const rest = JSON.stringify({ paths, schemas })
  const unused = PLATFORM_ONLY_SCHEMAS.every((name) => !rest.includes(`"#/components/schemas/${name}"`))
  return unused ? { ...spec, paths, components: { ...components, schemas } } : { ...spec, paths }
}

import { type Json, mapResponses } from "./document-json.js"

// A response's JSON schema as a reference to the component it repeats word for word, if any.
const referenced = (response: Json, components: ReadonlyMap<string, string>): Json => {
  const media = (response.content as Record<string, Json> | undefined)?.["application/json"]
  const name = media === undefined ? undefined : components.get(JSON.stringify(media.schema))
  if (media === undefined || name === undefined) return response
  return {
    ...response,
    description: name,
    content: {
      ...(response.content as Json),
      "application/json": { ...media, schema: { $ref: `#/components/schemas/${name}` } },
    },
  }
}

/**
 * An OpenAPI transform of the whole document: a response schema that repeats a component exactly (the
 * platform inlines a resource once a success status is annotated on it, as for every 201) refers to that
 * component instead, so a client generated from the document has one User, one Transaction, ... type, and the
 * response is described by the component's name (a GET of any public event was described "UserEvent").
 */
export const sharedSchemasReferenced = (spec: Json): Json => {
  const schemas = ((spec.components as Json | undefined)?.schemas ?? {}) as Json
  const components = new Map(Object.entries(schemas).map(([name, schema]) => [JSON.stringify(schema), name]))
  return mapResponses(spec, (_path, _operation, _status, response) => referenced(response, components))
}

/** A JSON object of the OpenAPI document, as its transforms read and rebuild it. */
export type Json = Record<string, unknown>

/** The members of a JSON object of the document (none when it is absent or not an object). */
export const entriesOf = (value: unknown): Array<[string, Json]> =>
  typeof value === "object" && value !== null ? (Object.entries(value) as Array<[string, Json]>) : []

/** Whether an operation of the document requires the named security scheme. */
export const securedBy = (operation: Json, scheme: string) =>
  Array.isArray(operation.security) && operation.security.some((requirement: Json) => scheme in requirement)

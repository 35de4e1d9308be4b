import { Schema } from "effect"

/** An ISO-8601 UTC timestamp, e.g. `2025-01-31T12:00:00.000Z` (`format: date-time` in the OpenAPI document). */
export const IsoTimestamp = Schema.String.pipe(
  Schema.annotations({
    identifier: "IsoTimestamp",
    description: "ISO-8601 UTC with milliseconds, e.g. 2025-01-31T12:00:00.000Z",
    jsonSchema: { format: "date-time" },
  }),
)

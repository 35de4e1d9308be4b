import { Schema } from "effect"

/** `limit`: 1..100 (default 20 when absent), from the query string. */
export const Limit = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "must be an integer from 1 to 100" }),
  Schema.between(1, 100, { message: () => "must be an integer from 1 to 100" }),
)

/** The paging parameters every list endpoint takes. */
export const PageQuery = {
  limit: Schema.optional(Limit),
  cursor: Schema.optional(Schema.String),
}

/** A path id: any string; an id that does not exist (or is malformed) is a 404 LE0002, not a 400. */
export const PathId = Schema.String

/** Makes a body schema report every invalid field, not only the first (DESIGN.md section 5). */
export const reportAllErrors = { parseOptions: { errors: "all" as const } }

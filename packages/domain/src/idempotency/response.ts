import { Schema } from "effect"

/** The error statuses whose response is deterministic and therefore recorded (published 4.1 and 7.1). */
export const recordableErrorStatuses: ReadonlyArray<number> = [400, 401, 404, 409, 429]

/** True when a response with this status is recorded for its key: every 2xx, and 400, 401, 404, 409, 429. */
export const isRecordable = (status: number): boolean =>
  (status >= 200 && status <= 299) || recordableErrorStatuses.includes(status)

/**
 * The response a key answers every retry with: status, the allow-listed headers (chosen by the caller, e.g.
 * `Content-Type` and `Location`) and the body as sent.
 */
export const RecordedResponse = Schema.Struct({
  status: Schema.Int.pipe(Schema.between(100, 599, { message: () => "must be an HTTP status" })),
  headers: Schema.Record({ key: Schema.String, value: Schema.String }),
  body: Schema.String,
}).annotations({ identifier: "RecordedResponse" })
export type RecordedResponse = typeof RecordedResponse.Type

/** True when two responses are the same status, headers and body. */
export const sameResponse = (a: RecordedResponse, b: RecordedResponse): boolean => {
  const headers = Object.keys(a.headers)
  return (
    a.status === b.status &&
    a.body === b.body &&
    headers.length === Object.keys(b.headers).length &&
    headers.every((name) => Object.hasOwn(b.headers, name) && b.headers[name] === a.headers[name])
  )
}

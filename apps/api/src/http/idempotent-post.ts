import { createHash } from "node:crypto"
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { IdempotencyKey } from "@points/domain"
import { ApiError, CurrentPrincipal } from "@points/http-api"
import {
  ClaimLost,
  claimKey,
  LogNotifier,
  type RequestContext,
  recordResponse,
  releaseKey,
} from "@points/infrastructure"
import { Cause, Effect, Exit, FiberRef, Metric, Option, Schema } from "effect"
import { v7 as uuidV7 } from "uuid"
import { Settings } from "../config.js"
import { answer } from "./answer.js"
import { apiErrorOf, entryOf, isPlatformError } from "./api-error-of.js"
import { errorBodyText } from "./error-response.js"
import { idempotencyReplays } from "./metrics.js"
import { currentRequestId } from "./request-context.js"

/** What an idempotent POST does, and how its result is answered. */
export interface IdempotentPost<A, I, E, R> {
  /** Create order requires the header (IK1003 without it); other POSTs accept it. */
  readonly required: boolean
  readonly successStatus: 200 | 201 | 202
  readonly resource: Schema.Schema<A, I>
  /** The business effect; its domain refusals are answered (and recorded), any other failure frees the key. */
  readonly run: (context: RequestContext) => Effect.Effect<A, E, R>
}

// JSON with sorted keys, so that `{"a":1,"b":2}` and `{"b":2,"a":1}` are one request.
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    )
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(",")}}`
  }
  return JSON.stringify(value)
}

const bodyDigest = (text: string) => {
  let normal = text
  try {
    normal = text.trim() === "" ? "" : canonical(JSON.parse(text))
  } catch {
    // A body the route ignores need not be JSON; it is fingerprinted as sent.
  }
  return createHash("sha256").update(normal).digest("hex")
}

const json = (status: number, body: string, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.text(body, { status, contentType: "application/json", headers })

/**
 * Runs a POST exactly once per Idempotency-Key (DESIGN.md section 4). The key is claimed without waiting
 * (IK1002 while another request holds it, IK1001 for a different request), the business effect and the
 * recorded response commit in one transaction, a replay answers the recorded status and body with
 * `Idempotent-Replayed: true`, recordable refusals (400, 404, 409, ...) are recorded too, and every other
 * outcome (422, 5xx, a crash) frees the key. Without the header a random key stands in: nothing replays.
 */
export const idempotentPost = <A, I, E, R>(post: IdempotentPost<A, I, E, R>) =>
  answer(
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const sql = yield* SqlClient.SqlClient
      const settings = yield* Settings
      const notifier = yield* LogNotifier
      const requestId = yield* FiberRef.get(currentRequestId)
      const partnerId = (yield* CurrentPrincipal).partnerId
      const parsed = yield* IdempotencyKey.parseIdempotencyKeyHeader(request.headers["idempotency-key"], {
        required: post.required,
      }).pipe(Effect.mapError(apiErrorOf))
      const encode = Schema.encodeSync(post.resource)

      if (Option.isNone(parsed)) {
        const context: RequestContext = { partnerId, requestId, idempotencyKey: uuidV7() }
        const result = yield* sql.withTransaction(post.run(context))
        yield* notifier.committed
        return json(post.successStatus, JSON.stringify(encode(result)))
      }

      const key = parsed.value
      const text = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
      const fingerprint = IdempotencyKey.RequestFingerprint.make({
        method: request.method,
        path: request.url.split("?")[0] ?? request.url,
        bodySha256: bodyDigest(text),
      })
      const outcome = yield* claimKey({
        partnerId,
        key,
        fingerprint,
        leaseSeconds: settings.idempotencyLeaseSeconds,
        lifetimeSeconds: settings.idempotencyTtlSeconds,
      })

      if (outcome._tag === "Replay") {
        yield* Metric.increment(idempotencyReplays)
        const { status, headers, body } = outcome.response
        return json(status, body, { ...headers, "Idempotent-Replayed": "true" })
      }
      const claim = { partnerId, key, claimToken: outcome.claimToken }
      const context: RequestContext = { partnerId, requestId, idempotencyKey: key }

      const exit = yield* Effect.exit(
        sql.withTransaction(
          Effect.gen(function* () {
            const body = JSON.stringify(encode(yield* post.run(context)))
            const response = {
              status: post.successStatus,
              headers: { "Content-Type": "application/json" },
              body,
            }
            yield* recordResponse({ ...claim, response })
            return response
          }),
        ),
      )
      if (Exit.isSuccess(exit)) {
        // Consumers are told after the outer commit: inside it, the unit of work's own signal came too early.
        yield* notifier.committed
        return json(exit.value.status, exit.value.body)
      }

      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure) && isPlatformError(failure.value)) {
        const error = apiErrorOf(failure.value)
        const body = errorBodyText(error)
        if (IdempotencyKey.isRecordable(error.status)) {
          const response = { status: error.status, headers: { "Content-Type": "application/json" }, body }
          yield* sql.withTransaction(recordResponse({ ...claim, response })).pipe(Effect.ignore)
        } else {
          yield* releaseKey(claim).pipe(Effect.ignore)
        }
        return json(error.status, body)
      }
      if (Option.isSome(failure) && failure.value instanceof ClaimLost) {
        // Our lease ran out and another request took the key over; our transaction rolled back.
        return yield* Effect.fail(
          new ApiError({
            status: 409,
            errors: [entryOf("IK1002", "a request with this Idempotency-Key is in progress")],
          }),
        )
      }
      // A failure of ours: nothing committed; free the key so the client's retry can execute.
      yield* releaseKey(claim).pipe(Effect.ignore)
      return yield* Effect.failCause(exit.cause)
    }),
  )

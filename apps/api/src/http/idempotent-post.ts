import { createHash } from "node:crypto"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { SqlClient } from "@effect/sql"
import { IdempotencyKey, IdempotencyKeyInProgress, idAsIssued, type PartnerId } from "@points/domain"
import { ApiError, CurrentPrincipal, routedPath } from "@points/http-api"
import {
  type AnyUnitPlan,
  type ClaimKeyRequest,
  claimKeyInTransaction,
  LogNotifier,
  type RequestContext,
  recordResponse,
  unitOfWorkSavepoint,
  uuidV7,
  WriteBatcher,
} from "@points/infrastructure"
import { Cause, Effect, Either, Exit, FiberRef, Metric, Option, Schema } from "effect"
import { type ApiSettings, Settings } from "../config.js"
import { answer } from "./answer.js"
import { apiErrorOf, isOAuthPath, isPlatformError, unexpected } from "./api-error-of.js"
import { bodyRouteOf } from "./body-routes.js"
import { errorBodyText } from "./error-response.js"
import { idempotencyReplays } from "./metrics.js"
import { currentPartnerId, currentRequestId, pathOf } from "./request-context.js"

/** What an idempotent POST does, and how its result is answered. */
export interface IdempotentPost<A, I, E, R> {
  /** Create order requires the header (IK1003 without it); other POSTs accept it. */
  readonly required: boolean
  readonly successStatus: 200 | 201 | 202
  readonly resource: Schema.Schema<A, I>
  /** The business effect; its domain refusals are answered (and recorded), any other failure frees the key. */
  readonly run: (context: RequestContext) => Effect.Effect<A, E, R>
  /**
   * The same write as a plan, when it has one: a request with a new key is then written by the write batcher
   * together with the others that arrive meanwhile (group commit); one it leaves out runs `run` alone.
   */
  readonly plan?: (context: RequestContext) => Effect.Effect<AnyUnitPlan, unknown, R>
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

// The path as the router reads it (routedPath), a UUID in any case as the id it names (the contract's paths
// vary only by ids). `/api/orders/%30…/cancel` and the same id in upper case are one request, not a different
// path under the same key.
const pathFingerprint = (path: string) => routedPath(path).split("/").map(idAsIssued).join("/")

const bodyDigest = (text: string) => {
  let normal = text
  try {
    normal = text.trim() === "" ? "" : canonical(JSON.parse(text))
  } catch {
    // A body the route ignores need not be JSON; it is fingerprinted as sent.
  }
  return createHash("sha256").update(normal).digest("hex")
}

// A business outcome that is not recorded (a 422, a failure of ours): it rolls the transaction back, claim
// included, and is answered afterwards.
class Unrecorded<E> {
  constructor(readonly error: E | ApiError) {}
}

// The business effect failed in a transaction without savepoints: it rolls back, and runs again with them.
class RunWithSavepoints {}

const runsWithoutSavepoints = (cause: Cause.Cause<unknown>) =>
  Option.exists(Cause.failureOption(cause), (error) => error instanceof RunWithSavepoints)

/**
 * Runs a request's transaction first without savepoints (the claim, the business effect and the response
 * each one round trip cheaper); if the business effect fails at all, that transaction rolls back (a failed
 * statement may have aborted it) and the request runs again with them, where a refusal is recorded beside
 * the claim and a version conflict is retried inside its unit of work. Nothing of the first run remains.
 */
const withSavepointsOnFailure = <A, E, R>(run: (savepoints: boolean) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.exit(run(false)), (exit) =>
    Exit.isFailure(exit) && runsWithoutSavepoints(exit.cause) ? run(true) : exit,
  )

// The business effect, with savepoints or failing as RunWithSavepoints on any failure (see above).
const businessEffect = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  savepoints: boolean,
  sql: SqlClient.SqlClient,
) =>
  savepoints
    ? Effect.either(sql.withTransaction(effect))
    : effect.pipe(
        Effect.locally(unitOfWorkSavepoint, false),
        Effect.mapError(() => new RunWithSavepoints()),
        Effect.map(Either.right),
      )

const json = (status: number, body: string, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.text(body, { status, contentType: "application/json", headers })

// Each Idempotency-Key field line as sent: Node joins repeated ones with ", " into what looks like one key.
const keyHeaderOf = (request: HttpServerRequest.HttpServerRequest) =>
  NodeHttpServerRequest.toIncomingMessage(request).headersDistinct["idempotency-key"]

/** A response as a key records it: JSON, with its status and body text. */
export const recorded = (status: number, body: string) => ({
  status,
  headers: { "Content-Type": "application/json" },
  body,
})

const replayOf = (response: IdempotencyKey.RecordedResponse) =>
  Effect.as(
    Metric.increment(idempotencyReplays),
    json(response.status, response.body, { ...response.headers, "Idempotent-Replayed": "true" }),
  )

// A claim of the partner's key for this request: its fingerprint is the method, the concrete path (its ids as
// issued) and the digest of the body as sent (JSON with sorted keys).
const claimRequestOf = (
  request: HttpServerRequest.HttpServerRequest,
  partnerId: PartnerId,
  key: IdempotencyKey.IdempotencyKeyValue,
) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const text = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
    return keyClaimOf(settings, { method: request.method, path: pathOf(request), text }, partnerId, key)
  })

/** The claim of a partner's key for a request, given its method, path and body text (see claimRequestOf). */
export const keyClaimOf = (
  settings: Pick<ApiSettings, "idempotencyLeaseSeconds" | "idempotencyTtlSeconds">,
  request: { readonly method: string; readonly path: string; readonly text: string },
  partnerId: PartnerId,
  key: IdempotencyKey.IdempotencyKeyValue,
): ClaimKeyRequest => ({
  partnerId,
  key,
  fingerprint: IdempotencyKey.RequestFingerprint.make({
    method: request.method,
    path: pathFingerprint(request.path),
    bodySha256: bodyDigest(request.text),
  }),
  leaseSeconds: settings.idempotencyLeaseSeconds,
  lifetimeSeconds: settings.idempotencyTtlSeconds,
})

/**
 * Runs a POST exactly once per Idempotency-Key (DESIGN.md section 4). The key is claimed without waiting
 * (IK1002 while another request holds it, IK1001 for a different request) in the transaction that runs the
 * business effect and records the response, so all three commit together; a replay answers the recorded
 * status and body with `Idempotent-Replayed: true`, recordable refusals (400, 404, 409, ...) are recorded
 * too, and every other outcome (422, 5xx, a crash) frees the key. Without the header a random key stands
 * in: nothing replays. A POST with a plan and a key is first handed to the write batcher, which writes it
 * with the others that arrive meanwhile (one transaction, the same claim, effect and record); one the batch
 * leaves out (its key in use or known, a refusal, a rollback) then runs here alone.
 */
export const idempotentPost = <A, I, E, R>(post: IdempotentPost<A, I, E, R>) =>
  answer(
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const sql = yield* SqlClient.SqlClient
      const notifier = yield* LogNotifier
      const requestId = yield* FiberRef.get(currentRequestId)
      const partnerId = (yield* CurrentPrincipal).partnerId
      const parsed = yield* IdempotencyKey.parseIdempotencyKeyHeader(keyHeaderOf(request), {
        required: post.required,
      }).pipe(Effect.mapError(apiErrorOf))
      const encode = Schema.encodeSync(post.resource)

      if (Option.isNone(parsed)) {
        const context: RequestContext = { partnerId, requestId, idempotencyKey: uuidV7() }
        const result = yield* withSavepointsOnFailure((savepoints) =>
          sql.withTransaction(
            savepoints ? post.run(context) : Effect.flatten(businessEffect(post.run(context), false, sql)),
          ),
        )
        yield* notifier.committed
        return json(post.successStatus, JSON.stringify(encode(result)))
      }

      const key = parsed.value
      const claimRequest = yield* claimRequestOf(request, partnerId, key)
      const context: RequestContext = { partnerId, requestId, idempotencyKey: key }

      if (post.plan !== undefined) {
        const plan = yield* Effect.option(post.plan(context))
        if (Option.isSome(plan)) {
          const batcher = yield* WriteBatcher
          const batched = yield* batcher.submit({
            plan: plan.value,
            claim: claimRequest,
            respond: (answer) => recorded(post.successStatus, JSON.stringify(encode(answer as A))),
          })
          if (batched._tag === "Committed") return json(batched.response.status, batched.response.body)
          // An earlier request of its batch has its key: this one came while that one ran.
          if (batched._tag === "InProgress") return yield* Effect.fail(new IdempotencyKeyInProgress())
        }
      }

      // One transaction: the claim, the business effect (run again in a savepoint if it fails, so that a
      // refusal leaves the claim standing) and the recorded response commit together or not at all. Anything
      // not recorded (422, 5xx, a crash) rolls the whole transaction back, claim included: the key is free.
      const exit = yield* Effect.exit(
        withSavepointsOnFailure((savepoints) =>
          sql.withTransaction(
            Effect.gen(function* () {
              const outcome = yield* claimKeyInTransaction(claimRequest)
              if (outcome._tag === "Replay") return { replayed: true, response: outcome.response } as const
              const claim = { partnerId, key, claimToken: outcome.claimToken, held: outcome.held }
              const result = yield* businessEffect(post.run(context), savepoints, sql)
              if (Either.isRight(result)) {
                const response = recorded(post.successStatus, JSON.stringify(encode(result.right)))
                yield* recordResponse({ ...claim, response })
                return { replayed: false, response } as const
              }
              if (!isPlatformError(result.left)) return yield* Effect.fail(new Unrecorded(result.left))
              const error = apiErrorOf(result.left)
              if (!IdempotencyKey.isRecordable(error.status)) return yield* Effect.fail(new Unrecorded(error))
              const response = recorded(error.status, errorBodyText(error))
              yield* recordResponse({ ...claim, response })
              return { replayed: false, response } as const
            }),
          ),
        ),
      )
      if (Exit.isSuccess(exit)) {
        const { replayed, response } = exit.value
        if (replayed) return yield* replayOf(response)
        // Consumers are told after the outer commit: inside it, the unit of work's own signal came too early.
        if (response.status < 300) yield* notifier.committed
        return json(response.status, response.body)
      }
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure) && failure.value instanceof Unrecorded) {
        const error = failure.value.error
        if (error instanceof ApiError) return json(error.status, errorBodyText(error))
        // A failure of ours (the database): answered by the error middleware; nothing committed.
        return yield* Effect.fail(error as E)
      }
      // The claim refused (IK1001, IK1002) or the database failed around it: nothing committed.
      return yield* Effect.failCause(exit.cause)
    }),
  )

// Every POST under /api takes a key, except the token endpoints (DESIGN.md section 4).
const takesKey = (method: string, path: string) =>
  method === "POST" && routedPath(path).startsWith("/api/") && !isOAuthPath(path)

/**
 * The answer to a keyed POST refused before its handler ran (its body failed the schema or was not JSON):
 * recorded against the partner's Idempotency-Key as the handlers' own refusals are (DESIGN.md section 4), in
 * a transaction of its own, so a retry replays it and the key can never run a different request later (422
 * IK1001; IK1002 while another request holds it). Without a key, an authenticated partner or a recordable
 * status, the refusal is answered as it is.
 */
export const refusedBeforeHandler = (
  refusal: ApiError,
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  ApiError,
  HttpServerRequest.HttpServerRequest | SqlClient.SqlClient | Settings
> =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const partnerId = yield* FiberRef.get(currentPartnerId)
    const path = pathOf(request)
    if (
      Option.isNone(partnerId) ||
      !takesKey(request.method, path) ||
      !IdempotencyKey.isRecordable(refusal.status)
    ) {
      return yield* Effect.fail(refusal)
    }
    // A bad header, or none where the key is required, is a problem of its own: answered beside the body's
    // (one entry per problem found), with no key to record under.
    const parsed = yield* Effect.either(
      IdempotencyKey.parseIdempotencyKeyHeader(keyHeaderOf(request), {
        required: bodyRouteOf(request.method, path)?.keyRequired === true,
      }),
    )
    if (Either.isLeft(parsed)) {
      const keyProblem = apiErrorOf(parsed.left).errors
      return yield* Effect.fail(new ApiError({ status: 400, errors: [...refusal.errors, ...keyProblem] }))
    }
    if (Option.isNone(parsed.right)) return yield* Effect.fail(refusal)
    const sql = yield* SqlClient.SqlClient
    const claimRequest = yield* claimRequestOf(request, partnerId.value, parsed.right.value)
    const outcome = yield* sql.withTransaction(
      Effect.gen(function* () {
        const claimed = yield* claimKeyInTransaction(claimRequest)
        if (claimed._tag === "Replay") return { replayed: true, response: claimed.response } as const
        const response = recorded(refusal.status, errorBodyText(refusal))
        const { partnerId, key } = claimRequest
        yield* recordResponse({
          partnerId,
          key,
          claimToken: claimed.claimToken,
          held: claimed.held,
          response,
        })
        return { replayed: false, response } as const
      }),
    )
    return outcome.replayed ? yield* replayOf(outcome.response) : json(refusal.status, outcome.response.body)
  }).pipe(
    Effect.catchAllCause((cause) => {
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure) && failure.value instanceof ApiError) return Effect.fail(failure.value)
      if (Option.isSome(failure) && isPlatformError(failure.value))
        return Effect.fail(apiErrorOf(failure.value))
      // The database failed around the record: nothing was recorded; the outcome is ours to report.
      return Effect.zipRight(
        Effect.logError("recording a refused request failed", cause),
        Effect.fail(unexpected()),
      )
    }),
  )

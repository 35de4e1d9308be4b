import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Clock, Effect, Either, FiberRef, Option } from "effect"
import type { AccessTokens } from "./access-tokens.js"
import { RetriesExhausted } from "./client-errors.js"
import { currentCall, type LastAttempt, noAttempt } from "./current-call.js"
import { backoffMillis, type ResolvedRetryPolicy, retryAfterMillis } from "./retry-policy.js"

/** A fresh Idempotency-Key: a random UUID (v4), as the published 4.1 recommends. */
export const newIdempotencyKey = (): string => globalThis.crypto.randomUUID()

// Every attempt is a request of its own on the server: each sends its own X-Request-ID, which the server
// echoes and records, so an attempt can be named to support.
const newRequestId = (): string => globalThis.crypto.randomUUID()

// The token endpoints take no Idempotency-Key (DESIGN.md section 4) and no bearer token.
const isOAuthEndpoint = (url: string) => url.includes("/api/oauth/")

// An error's own words, whatever it is (a token endpoint's refusal, its retries run out).
const messageOf = (error: unknown) =>
  error instanceof Error ? error.message : typeof error === "string" ? error : String(error)

/** A failed attempt worth retrying: what happened, and the least wait the server asked for. */
interface RetriableFailure {
  readonly status: number | null
  readonly description: string
  readonly serverDelayMillis: number | undefined
}

// Statuses whose answer has no body (a Response cannot be made with one).
const bodiless = (status: number) => status === 204 || status === 205 || status === 304

/**
 * The answer with its body read in full, as part of the attempt: a body that stalls runs into the attempt's
 * time limit and one that breaks off is a failure of the transport, so either is retried with the same key
 * (a write that did happen is then replayed) instead of hanging the call or failing it as a protocol error.
 */
const buffered = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(response.arrayBuffer, (body) => ({
    response: HttpClientResponse.fromWeb(
      response.request,
      new Response(bodiless(response.status) ? null : body, {
        status: response.status,
        headers: response.headers,
      }),
    ),
    body,
  }))

// A 409 IK1002: another attempt of this very call (one that timed out here, say) still holds the key on the
// server, so the outcome is open; any other 409 is a refusal.
const isInProgress = (status: number, body: ArrayBuffer) => {
  if (status !== 409) return false
  try {
    const errors = (JSON.parse(new TextDecoder().decode(body)) as { readonly errors?: unknown } | null)
      ?.errors
    return (
      Array.isArray(errors) &&
      errors.some((entry) => (entry as { readonly code?: unknown } | null)?.code === "IK1002")
    )
  } catch {
    return false
  }
}

const isRetriableStatus = (status: number, critical: boolean) =>
  status === 502 || status === 503 || status === 504 || (status === 500 && !critical)

/**
 * An HttpClient over `base` that follows the published retry guidance (section 4.2):
 * - every POST (outside `/api/oauth`) carries one Idempotency-Key, the caller's or a fresh one, on every attempt;
 * - no response (connection failure, timeout), 502, 503, 504, and 500 outside the critical operations are
 *   retried with exponential backoff and jitter (never sooner than a Retry-After of up to `maxRetryAfter`);
 * - 429 is retried after its Retry-After (up to `maxRetryAfter`; a longer one is returned to the caller);
 * - 500 on a critical operation is returned at once, never retried;
 * - at most `maxRetries` retries, then `RetriesExhausted`;
 * - 409 IK1002 (an earlier attempt of the call still runs on the server) is retried with backoff too;
 * - an attempt's answer is read in full within `requestTimeout`: a body that stalls or breaks off counts as
 *   no response;
 * - a call that would outlast `deadline` (attempts and waits included) ends with RetriesExhausted, at once when
 *   the next wait alone would pass it;
 * - every attempt sends an X-Request-ID of its own; the call's last one is on RetriesExhausted;
 * - with `tokens`, each attempt carries a current bearer token; a 401 drops it and the request is sent once
 *   more with a new one.
 */
export const resilientHttpClient = <E>(
  base: HttpClient.HttpClient,
  policy: ResolvedRetryPolicy,
  tokens: Option.Option<AccessTokens<E>>,
): HttpClient.HttpClient.With<HttpClientError.HttpClientError | RetriesExhausted | E> => {
  const attempt = (request: HttpClientRequest.HttpClientRequest) =>
    base.execute(request).pipe(
      Effect.flatMap(buffered),
      Effect.catchTag("ResponseError", (error) =>
        Effect.fail(
          new HttpClientError.RequestError({
            request,
            reason: "Transport",
            description: `the answer broke off (${error.message})`,
          }),
        ),
      ),
      Effect.timeoutFail({
        duration: policy.requestTimeout,
        onTimeout: () =>
          new HttpClientError.RequestError({ request, reason: "Transport", description: "timed out" }),
      }),
      Effect.either,
    )

  const send = (
    request: HttpClientRequest.HttpClientRequest,
  ): Effect.Effect<
    HttpClientResponse.HttpClientResponse,
    HttpClientError.HttpClientError | RetriesExhausted | E
  > =>
    Effect.gen(function* () {
      const call = yield* FiberRef.get(currentCall)
      const oauth = isOAuthEndpoint(request.url)
      const key =
        request.method !== "POST" || oauth
          ? null
          : (request.headers["idempotency-key"] ??
            Option.match(call, {
              onNone: newIdempotencyKey,
              onSome: (settings) => settings.idempotencyKey ?? newIdempotencyKey(),
            }))
      const keyed = key === null ? request : HttpClientRequest.setHeader(request, "Idempotency-Key", key)
      const critical = Option.exists(call, (settings) => settings.critical)
      const bearer = oauth ? Option.none() : tokens
      const started = yield* Clock.currentTimeMillis
      let renewedToken = false
      let lastAttempt: LastAttempt = noAttempt
      let attempts = 0
      const exhausted = (lastFailure: string) =>
        new RetriesExhausted({
          method: request.method,
          url: request.url,
          attempts,
          lastStatus: lastAttempt.status,
          lastFailure,
          idempotencyKey: key,
          requestId: lastAttempt.requestId,
        })
      const retrying = Effect.gen(function* () {
        for (let retry = 0; ; ) {
          // No token to send it (again): before any attempt the call was not sent, and the token's own failure
          // says why; after one, the call's outcome may be open, so its retries end here, as the call's.
          const token = Option.isSome(bearer)
            ? yield* Effect.catchAll(
                bearer.value.current,
                (error): Effect.Effect<never, E | RetriesExhausted> =>
                  attempts === 0
                    ? Effect.fail(error)
                    : Effect.fail(exhausted(`no access token (${messageOf(error)})`)),
              )
            : undefined
          const requestId = newRequestId()
          const identified = HttpClientRequest.setHeader(keyed, "X-Request-ID", requestId)
          const outgoing = token === undefined ? identified : HttpClientRequest.bearerToken(identified, token)
          attempts += 1
          // Known before the answer: an attempt abandoned at the deadline is named by what it sent.
          lastAttempt = { ...noAttempt, requestId }
          const outcome = yield* attempt(outgoing)
          if (Either.isRight(outcome)) {
            const { headers } = outcome.right.response
            const retryAfter = retryAfterMillis(headers["retry-after"], yield* Clock.currentTimeMillis)
            lastAttempt = {
              requestId: headers["x-request-id"] ?? requestId,
              status: outcome.right.response.status,
              replayed: headers["idempotent-replayed"] === "true",
              retryAfterSeconds: retryAfter === undefined ? null : Math.ceil(retryAfter / 1000),
            }
          }
          if (Option.isSome(call)) call.value.lastAttempt = lastAttempt
          let failure: RetriableFailure
          if (Either.isLeft(outcome)) {
            const error = outcome.left
            // Only a transport failure leaves the outcome open; a request that cannot be built fails as is.
            if (!(error._tag === "RequestError" && error.reason === "Transport"))
              return yield* Effect.fail(error)
            failure = {
              status: null,
              description: `no response (${error.message})`,
              serverDelayMillis: undefined,
            }
          } else {
            const { response, body } = outcome.right
            if (response.status === 401 && token !== undefined && Option.isSome(bearer) && !renewedToken) {
              // The token expired or was revoked early; a 401 executed nothing, so the same key is safe.
              renewedToken = true
              yield* bearer.value.invalidate(token)
              continue
            }
            const now = yield* Clock.currentTimeMillis
            const retryAfter = retryAfterMillis(response.headers["retry-after"], now)
            const throttled = response.status === 429
            if (throttled && retryAfter !== undefined && retryAfter > policy.maxRetryAfterMillis)
              return response
            const inProgress = isInProgress(response.status, body)
            if (!(throttled || inProgress || isRetriableStatus(response.status, critical))) return response
            failure = {
              status: response.status,
              description: inProgress
                ? "status 409 IK1002 (the request is still in progress)"
                : `status ${response.status}`,
              serverDelayMillis:
                retryAfter === undefined ? undefined : Math.min(retryAfter, policy.maxRetryAfterMillis),
            }
          }
          if (retry >= policy.maxRetries) return yield* exhausted(failure.description)
          const backoff = yield* backoffMillis(policy, retry)
          // A 429 waits exactly as long as it asks; other failures back off, never sooner than a Retry-After.
          const wait =
            failure.status === 429 && failure.serverDelayMillis !== undefined
              ? failure.serverDelayMillis
              : Math.max(backoff, failure.serverDelayMillis ?? 0)
          const elapsed = (yield* Clock.currentTimeMillis) - started
          if (policy.deadlineMillis !== undefined && elapsed + wait >= policy.deadlineMillis)
            return yield* exhausted(`${failure.description}; the next attempt would start past the deadline`)
          yield* Effect.logDebug("retrying", {
            retry: retry + 1,
            failure: failure.description,
            waitMillis: wait,
          })
          yield* Effect.sleep(wait)
          retry += 1
        }
      })
      // The hard bound: an attempt or a token fetch still running at the deadline is abandoned, its outcome open.
      return yield* policy.deadlineMillis === undefined
        ? retrying
        : Effect.timeoutFail(retrying, {
            duration: Math.max(0, policy.deadlineMillis),
            onTimeout: () => exhausted("the call's deadline passed before an answer"),
          })
    })

  return HttpClient.makeWith(
    (request: Effect.Effect<HttpClientRequest.HttpClientRequest>) => Effect.flatMap(request, send),
    Effect.succeed,
  )
}

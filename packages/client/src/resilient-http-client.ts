import { HttpClient, HttpClientError, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Clock, Effect, Either, FiberRef, Option } from "effect"
import type { AccessTokens } from "./access-tokens.js"
import { RetriesExhausted } from "./client-errors.js"
import { currentCall } from "./current-call.js"
import { backoffMillis, type ResolvedRetryPolicy, retryAfterMillis } from "./retry-policy.js"

/** A fresh Idempotency-Key: a random UUID (v4), as the published 4.1 recommends. */
export const newIdempotencyKey = (): string => globalThis.crypto.randomUUID()

// The token endpoints take no Idempotency-Key (DESIGN.md section 4) and no bearer token.
const isOAuthEndpoint = (url: string) => url.includes("/api/oauth/")

/** A failed attempt worth retrying: what happened, and the least wait the server asked for. */
interface RetriableFailure {
  readonly status: number | null
  readonly description: string
  readonly serverDelayMillis: number | undefined
}

// The body of a response we retry past is read and dropped, so the connection can be reused.
const discard = (response: HttpClientResponse.HttpClientResponse) =>
  response.arrayBuffer.pipe(Effect.timeout("5 seconds"), Effect.ignore)

const isRetriableStatus = (status: number, critical: boolean) =>
  status === 502 || status === 503 || status === 504 || (status === 500 && !critical)

/**
 * An HttpClient over `base` that follows the published retry guidance (section 4.2):
 * - every POST (outside `/api/oauth`) carries one Idempotency-Key, the caller's or a fresh one, on every attempt;
 * - no response (connection failure, timeout), 502, 503, 504, and 500 outside the critical operations are
 *   retried with exponential backoff and jitter (never sooner than a Retry-After);
 * - 429 is retried after its Retry-After (up to `maxRetryAfter`; a longer one is returned to the caller);
 * - 500 on a critical operation is returned at once, never retried;
 * - at most `maxRetries` retries, then `RetriesExhausted`;
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
            Option.match(call, { onNone: newIdempotencyKey, onSome: (settings) => settings.idempotencyKey }))
      const keyed = key === null ? request : HttpClientRequest.setHeader(request, "Idempotency-Key", key)
      const critical = Option.exists(call, (settings) => settings.critical)
      const bearer = oauth ? Option.none() : tokens
      let renewedToken = false
      for (let retry = 0; ; ) {
        const token = Option.isSome(bearer) ? yield* bearer.value.current : undefined
        const outgoing = token === undefined ? keyed : HttpClientRequest.bearerToken(keyed, token)
        const outcome = yield* attempt(outgoing)
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
          const response = outcome.right
          if (response.status === 401 && token !== undefined && Option.isSome(bearer) && !renewedToken) {
            // The token expired or was revoked early; a 401 executed nothing, so the same key is safe.
            renewedToken = true
            yield* discard(response)
            yield* bearer.value.invalidate(token)
            continue
          }
          const now = yield* Clock.currentTimeMillis
          const retryAfter = retryAfterMillis(response.headers["retry-after"], now)
          const throttled = response.status === 429
          if (throttled && retryAfter !== undefined && retryAfter > policy.maxRetryAfterMillis)
            return response
          if (!(throttled || isRetriableStatus(response.status, critical))) return response
          yield* discard(response)
          failure = {
            status: response.status,
            description: `status ${response.status}`,
            serverDelayMillis:
              retryAfter === undefined ? undefined : Math.min(retryAfter, policy.maxRetryAfterMillis),
          }
        }
        if (retry >= policy.maxRetries) {
          return yield* new RetriesExhausted({
            method: request.method,
            url: request.url,
            attempts: retry + 1,
            lastStatus: failure.status,
            lastFailure: failure.description,
            idempotencyKey: key,
          })
        }
        const backoff = yield* backoffMillis(policy, retry)
        // A 429 waits exactly as long as it asks; other failures back off, never sooner than a Retry-After.
        const wait =
          failure.status === 429 && failure.serverDelayMillis !== undefined
            ? failure.serverDelayMillis
            : Math.max(backoff, failure.serverDelayMillis ?? 0)
        yield* Effect.logDebug("retrying", {
          retry: retry + 1,
          failure: failure.description,
          waitMillis: wait,
        })
        yield* Effect.sleep(wait)
        retry += 1
      }
    })

  return HttpClient.makeWith(
    (request: Effect.Effect<HttpClientRequest.HttpClientRequest>) => Effect.flatMap(request, send),
    Effect.succeed,
  )
}

import type { IncomingMessage, Server, ServerResponse } from "node:http"
import { IdempotencyKey, IdempotencyKeyInProgress, TransactionResource } from "@points/domain"
import { PointsGroup } from "@points/http-api"
import {
  addPointsPlan,
  anyUnitPlan,
  BearerTokens,
  type PointsMovementInput,
  type Principal,
  type RateLimitDecision,
  subtractPointsPlan,
  WriteBatcher,
} from "@points/infrastructure"
import { Effect, Either, Exit, Layer, Option, Runtime, Schema } from "effect"
import { partnerRateLimitPolicy, Settings } from "../config.js"
import { apiErrorOf } from "./api-error-of.js"
import { bearerCredentialsOf } from "./bearer-credentials.js"
import { CappedRequest, MAX_BODY_BYTES } from "./capped-request.js"
import { errorBodyText } from "./error-response.js"
import { handOverDecision } from "./handed-over.js"
import { keyClaimOf, recorded } from "./idempotent-post.js"
import { directWriteRequests, recordRequest, requestsInFlight } from "./metrics.js"
import { ApiNodeServer } from "./node-server.js"
import { rateLimitHeaders } from "./rate-limit-headers.js"
import { annotate, bodiesOverBudget, commonHeaders, requestIdOf } from "./server-middleware.js"

interface Movement {
  readonly decode: ReturnType<typeof payloadDecoderOf>
  readonly plan: typeof addPointsPlan
}

type Listener = (request: IncomingMessage, response: ServerResponse) => void

// Each payload is decoded with the contract's own schema of the endpoint, so that what is accepted here is
// exactly what the router's decoding accepts.
const payloadDecoderOf = (endpoint: "addPoints" | "subtractPoints") => {
  const endpoints: Readonly<Record<string, { readonly payloadSchema: Option.Option<unknown> }>> =
    PointsGroup.endpoints
  const schema = Option.getOrThrow(endpoints[endpoint]?.payloadSchema ?? Option.none())
  return Schema.decodeUnknownEither(schema as Schema.Schema<{ readonly transaction: PointsMovementInput }>)
}

// The endpoints taken here: the group-committed points movements, by their exact path.
const movements = new Map<string, Movement>([
  ["/api/points/add", { decode: payloadDecoderOf("addPoints"), plan: addPointsPlan }],
  ["/api/points/subtract", { decode: payloadDecoderOf("subtractPoints"), plan: subtractPointsPlan }],
])

const encodeTransaction = Schema.encodeSync(TransactionResource)

/**
 * The head of a request this path may answer: a POST of a points movement with a JSON body of a declared
 * length, one bearer token, one Idempotency-Key, and nothing the server middleware would refuse or the
 * router read differently (no query, no encoded path, HTTP/1.1 with Host, no content coding). Anything else
 * goes to the platform untouched.
 */
const headOf = (request: IncomingMessage) => {
  if (request.method !== "POST" || !(request instanceof CappedRequest)) return undefined
  const movement = movements.get(request.url ?? "")
  if (movement === undefined) return undefined
  const { headers } = request
  if (request.httpVersion !== "1.1" || headers.host === undefined) return undefined
  if (headers["transfer-encoding"] !== undefined || headers["content-encoding"] !== undefined)
    return undefined
  const length = headers["content-length"]
  if (length === undefined || !/^[1-9][0-9]{0,6}$/.test(length) || Number(length) > MAX_BODY_BYTES) {
    return undefined
  }
  const mediaType = (headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase()
  if (mediaType !== "application/json") return undefined
  if (request.headersDistinct.authorization?.length !== 1) return undefined
  const credentials = bearerCredentialsOf(headers.authorization)
  if (credentials._tag !== "Token") return undefined
  const key = Effect.runSync(
    Effect.option(
      IdempotencyKey.parseIdempotencyKeyHeader(request.headersDistinct["idempotency-key"], {
        required: false,
      }),
    ),
  ).pipe(Option.flatten)
  if (Option.isNone(key)) return undefined
  return { request, path: request.url as string, movement, token: credentials.token, key: key.value }
}

type Head = NonNullable<ReturnType<typeof headOf>>

// What became of a request taken here: answered (the status it was given), or handed to the platform.
type Outcome =
  | { readonly _tag: "Answered"; readonly status: number }
  | { readonly _tag: "HandedOver"; readonly decision?: RateLimitDecision }

const answered = (status: number): Outcome => ({ _tag: "Answered", status })
const handedOver = (decision?: RateLimitDecision): Outcome =>
  decision === undefined ? { _tag: "HandedOver" } : { _tag: "HandedOver", decision }

/**
 * Puts `take` in front of a server's request listeners (the platform's): each request goes to `take`, which
 * answers it or passes it, now or later, to the listeners that were there. Returns what undoes it.
 */
const inFrontOf = (
  server: Server,
  take: (request: IncomingMessage, response: ServerResponse, pass: Listener) => void,
) => {
  const listeners = server.listeners("request") as Array<Listener>
  const pass: Listener = (request, response) => {
    for (const listener of listeners) listener.call(server, request, response)
  }
  const dispatch: Listener = (request, response) => take(request, response, pass)
  server.removeAllListeners("request")
  server.on("request", dispatch)
  return () => {
    server.off("request", dispatch)
    for (const listener of listeners) server.on("request", listener)
  }
}

/**
 * The direct write path of the points movements (Add points, Subtract points): the hottest writes of the
 * API, answered straight off Node's request event instead of through the HTTP platform's router and
 * middleware, which cost about as much CPU per request as the group-committed write itself. It answers only
 * the case it is sure of: a well-formed request (as the server middleware and the contract's schema read
 * it) with a token this process already holds as valid, a fresh Idempotency-Key, within its partner's rate
 * limit, written by the write batcher (201), or refused in its batch because an earlier request of the batch
 * has its key (409 IK1002), each with the same headers, body, access log line and metrics as the platform's
 * answer. Every other request, and any this path cannot finish (a refusal, a replay, a rollback, a database
 * failure), goes to the platform as it came, its body given back unread and its rate-limit decision with it
 * (a request counts once), and is answered there.
 */
export const DirectPointsWritesLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const server = yield* ApiNodeServer
    const settings = yield* Settings
    const tokens = yield* BearerTokens
    const batcher = yield* WriteBatcher
    const runtime = yield* Effect.runtime<never>()
    const runSyncExit = Runtime.runSyncExit(runtime)
    const runFork = Runtime.runFork(runtime)
    const policy = partnerRateLimitPolicy(settings)

    // A token this process holds as valid now, without waiting or looking anything up: any other is the
    // platform's to look up (and to count against its network if it fails: see checkedBearer), which then
    // remembers a valid one.
    const principalOf = (token: string): Principal | undefined => {
      const exit = runSyncExit(tokens.held(token))
      return Exit.isSuccess(exit) && exit.value._tag === "Held" ? exit.value.principal : undefined
    }

    const take = (incoming: IncomingMessage, response: ServerResponse, pass: Listener) => {
      const head = headOf(incoming)
      const principal = head === undefined ? undefined : principalOf(head.token)
      if (head === undefined || principal === undefined) return pass(incoming, response)
      const { request } = head
      const startedAt = performance.now()
      const given = request.headers["x-request-id"]
      const requestId = requestIdOf(typeof given === "string" ? given : undefined)
      const common = commonHeaders(head.path, requestId)
      requestsInFlight.unsafeModify(1, [])
      let settled = false
      // Once settled, the request is the platform's or answered: this path's listeners go.
      const settle = () => {
        settled = true
        request.off("close", onClose)
        request.off("error", onError)
      }
      const handOver = (decision?: RateLimitDecision) => {
        if (settled) return
        settle()
        requestsInFlight.unsafeModify(-1, [])
        directWriteRequests.handedOver.unsafeUpdate(1, [])
        if (decision !== undefined) handOverDecision(request, decision)
        request.releaseBody()
        pass(request, response)
      }
      const answer = (status: number, body: string, headers: Readonly<Record<string, string>>) =>
        Effect.suspend(() => {
          settle()
          request.consumeBody()
          response.writeHead(status, {
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(body)),
            ...lowerCased({ ...common, ...headers }),
          })
          response.end(body)
          const seconds = (performance.now() - startedAt) / 1000
          requestsInFlight.unsafeModify(-1, [])
          directWriteRequests.answered.unsafeUpdate(1, [])
          recordRequest({ method: "POST", route: head.path, status, seconds })
          return Effect.zipRight(
            annotate({
              service: "api",
              request_id: requestId,
              method: "POST",
              path: head.path,
              route: head.path,
              status,
              duration_ms: Math.round(seconds * 10_000) / 10,
            }),
            Effect.logInfo("request"),
          )
        })

      // The client went away before its body arrived: the platform ends such a request (499).
      const onClose = () => {
        if (!request.complete) handOver()
      }
      // Too many bodies arriving at once: refused as the server middleware refuses it, before anything ran.
      const onError = () => {
        if (settled || request.overBudget === undefined) return
        settle()
        runFork(answer(503, errorBodyText(bodiesOverBudget(request.overBudget)), { "Retry-After": "2" }))
      }
      request.on("close", onClose)
      request.on("error", onError)
      request.holdBody((body) => {
        const payload = body === undefined ? undefined : payloadOf(head, body)
        if (payload === undefined) return handOver()
        const claim = keyClaimOf(
          settings,
          { method: "POST", path: head.path, text: payload.text },
          principal.partnerId,
          head.key,
        )
        const write = Effect.gen(function* () {
          const context = { partnerId: principal.partnerId, requestId, idempotencyKey: head.key }
          const plan = yield* Effect.option(head.movement.plan(context, payload.value.transaction))
          if (Option.isNone(plan)) return handedOver()
          // The partner's rate limit is taken by the batcher, for all of a batch's requests at once.
          const outcome = yield* batcher.submit({
            plan: anyUnitPlan(plan.value),
            claim,
            respond: (resource) => recorded(201, JSON.stringify(encodeTransaction(resource as never))),
            rateLimit: { key: `partner:${principal.partnerId}`, policy },
          })
          const decision = outcome.rateLimit
          if (outcome._tag === "RateLimited" || outcome._tag === "RunAlone" || decision === undefined) {
            return handedOver(decision)
          }
          const limited = rateLimitHeaders([["partner", decision]])
          if (outcome._tag === "Committed") {
            yield* answer(outcome.response.status, outcome.response.body, limited)
            return answered(outcome.response.status)
          }
          yield* answer(409, errorBodyText(apiErrorOf(new IdempotencyKeyInProgress())), limited)
          return answered(409)
        })
        runFork(
          write.pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(
                Effect.logWarning("the direct write path handed a request over after a failure", cause),
                handedOver(),
              ),
            ),
            Effect.tap((outcome) =>
              Effect.sync(() => {
                if (outcome._tag === "HandedOver") handOver(outcome.decision)
              }),
            ),
          ),
        )
      })
    }

    yield* Effect.acquireRelease(
      Effect.sync(() => inFrontOf(server, take)),
      (undo) => Effect.sync(undo),
    )
  }),
)

// The body as JSON and as the endpoint's payload, or undefined when it is neither (the platform refuses it).
const payloadOf = (head: Head, body: Buffer) => {
  const text = body.toString("utf8")
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return undefined
  }
  const decoded = head.movement.decode(json)
  return Either.isLeft(decoded) ? undefined : { text, value: decoded.right }
}

// Header names as the platform writes them (lower case), so that both paths answer alike.
const lowerCased = (headers: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))

import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { InvalidParams, WebhookEndpoint } from "@points/domain"
import { ApiError, MAX_PROBLEMS } from "@points/http-api"
import { Effect, Option } from "effect"
import { Settings } from "../config.js"
import { entryOf } from "./api-error-of.js"
import { pathOf } from "./request-context.js"

const takesTarget = (method: string, path: string) =>
  (method === "POST" && path === "/api/webhooks/endpoints") ||
  (method === "PATCH" && /^\/api\/webhooks\/endpoints\/[^/]+$/.test(path))

/**
 * A schema refusal of a webhook endpoint's body, with the `url`'s target problem added when the url itself
 * passed the schema: the target rule (https, no private or loopback address) is the domain's and runs after
 * decoding, so without this a client would learn of a refused url only once every other field is right
 * (DESIGN.md section 5: every invalid field). Names that resolve to private addresses are still found only
 * at registration.
 */
export const withWebhookTargetProblem = (refusal: ApiError) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!takesTarget(request.method, pathOf(request)) || refusal.errors.length >= MAX_PROBLEMS) return refusal
    if (refusal.errors.some((entry) => entry.message.startsWith("url "))) return refusal
    const body = yield* Effect.option(request.json)
    const url = Option.isSome(body) ? (body.value as { readonly url?: unknown } | null)?.url : undefined
    if (typeof url !== "string") return refusal
    const settings = yield* Settings
    const problem = WebhookEndpoint.targetProblem(url, {
      allowPrivateTargets: settings.webhookAllowPrivateTargets,
    })
    if (problem === null) return refusal
    const entry = entryOf("GH1006", new InvalidParams({ field: "url", problem }).message)
    return new ApiError({ status: refusal.status, errors: [entry, ...refusal.errors] })
  })

import { API_VERSION } from "./api-version.js"
import { isTokenEndpoint, type Json, mapResponses, securedBy, takesIdempotencyKey } from "./document-json.js"
import { answersSigningSecret } from "./secret-paths.js"

const text = { type: "string" }

// The headers the server sets (DESIGN.md sections 4, 5 and 7), each once, referred to by the responses.
const headers: Record<string, Json> = {
  RequestId: {
    description:
      "The request's id: the X-Request-ID sent when it is 1 to 200 visible ASCII characters without spaces, a fresh UUID otherwise. Every event the request causes records it.",
    required: true,
    schema: text,
  },
  ApiVersion: {
    description: "The version of this API.",
    required: true,
    schema: { ...text, const: API_VERSION },
  },
  RateLimitPolicy: {
    description:
      'The rate limit\'s bucket: its size (the burst) per window, e.g. `"partner";q=200;w=1`. On the token endpoints a list of the buckets asked, in order: `"address"` (the caller\'s network; from IPv6 also `"site"`, its /48) and, if those let the request through, `"client"` (its client id from that source). On every answer to a request that passed authentication (on the token endpoints, that named its client); not on a 413 answered from a `Content-Length` over the limit, before the token was looked at.',
    schema: text,
  },
  RateLimit: {
    description:
      'What is left of each bucket of RateLimit-Policy and in how many seconds it refills, e.g. `"partner";r=17;t=1`.',
    schema: text,
  },
  RetryAfter: {
    description: "Seconds to wait before trying again.",
    required: true,
    schema: { ...text, pattern: "^[0-9]+$" },
  },
  IdempotentReplayed: {
    description:
      "`true` when this is the recorded answer of an earlier request with the same Idempotency-Key: nothing ran again.",
    schema: { ...text, const: "true" },
  },
  BearerChallenge: {
    description:
      'The Bearer challenge (RFC 6750), with `error="invalid_token"` when the request carried a Bearer token (none for another scheme).',
    required: true,
    schema: text,
  },
  BasicChallenge: {
    description:
      "The Basic challenge, when the client authenticated with the Authorization header (RFC 6749 5.2).",
    schema: text,
  },
  NoStore: {
    description:
      "Answers with a token, a client secret or a webhook signing secret are never cached (RFC 6749 5.1).",
    required: true,
    schema: { ...text, const: "no-store" },
  },
  NoCache: {
    description:
      "Answers with a token, a client secret or a webhook signing secret are never cached (RFC 6749 5.1).",
    required: true,
    schema: { ...text, const: "no-cache" },
  },
}

const ref = (name: keyof typeof headers) => ({ $ref: `#/components/headers/${name}` })

// The statuses an answer recorded under an Idempotency-Key can have, and so be replayed with.
const replayable = (status: string) => status.startsWith("2") || ["400", "404", "409"].includes(status)

// The answers that show a client secret (the one time it is shown): their JSON schema, or the component it
// refers to, has a `client_secret` property.
const showsClientSecret = (response: Json, schemas: Json) => {
  const media = (response.content as Record<string, Json> | undefined)?.["application/json"]
  const schema = media?.schema as Json | undefined
  const reference =
    typeof schema?.$ref === "string" ? schema.$ref.replace("#/components/schemas/", "") : undefined
  const resolved = reference === undefined ? schema : (schemas[reference] as Json | undefined)
  return (
    typeof resolved?.properties === "object" &&
    resolved.properties !== null &&
    "client_secret" in resolved.properties
  )
}

// The headers of one response of an operation: which apply follows from its path, its security and status.
const headersOf = (path: string, operation: Json, status: string, response: Json, schemas: Json): Json => {
  const oauth = isTokenEndpoint(path)
  const partner = securedBy(operation, "bearer")
  const admin = securedBy(operation, "adminToken")
  return {
    "X-Request-Id": ref("RequestId"),
    "Api-Version": ref("ApiVersion"),
    // A 415, or a 413 of a declared length, is answered from the request's head, before the token or the
    // client is looked at; a partner's 413 found while its chunked body was read came after its token.
    ...(((partner && status !== "401") || (oauth && status !== "413")) && status !== "415"
      ? { "RateLimit-Policy": ref("RateLimitPolicy"), RateLimit: ref("RateLimit") }
      : {}),
    ...(status === "429" || status === "503" ? { "Retry-After": ref("RetryAfter") } : {}),
    ...(status === "401" && (partner || admin) ? { "WWW-Authenticate": ref("BearerChallenge") } : {}),
    ...(status === "401" && oauth ? { "WWW-Authenticate": ref("BasicChallenge") } : {}),
    ...(oauth || answersSigningSecret(path) || showsClientSecret(response, schemas)
      ? { "Cache-Control": ref("NoStore"), Pragma: ref("NoCache") }
      : {}),
    ...(takesIdempotencyKey(operation) && replayable(status)
      ? { "Idempotent-Replayed": ref("IdempotentReplayed") }
      : {}),
  }
}

/**
 * An OpenAPI transform of the whole document: every response lists the headers the server sets on it
 * (request id and version everywhere, the rate limit's after authentication, Retry-After on 429 and 503, the
 * challenge on 401, no-store on the token endpoints and where a secret is shown, Idempotent-Replayed where a replay can answer), each
 * described once under `components.headers`. The platform documents no response headers of its own.
 */
export const responseHeadersInDocument = (spec: Json): Json => {
  const schemas = ((spec.components as Json | undefined)?.schemas ?? {}) as Json
  const withHeaders = mapResponses(spec, (path, operation, status, response) => ({
    ...response,
    headers: {
      ...(response.headers as Json | undefined),
      ...headersOf(path, operation, status, response, schemas),
    },
  }))
  return { ...withHeaders, components: { ...(spec.components as Json | undefined), headers } }
}

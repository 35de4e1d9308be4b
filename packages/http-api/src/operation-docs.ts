import { entriesOf, isTokenEndpoint, type Json, mapOperations } from "./document-json.js"

/** What an operation is for, and the rules a caller must know that its schemas cannot say. */
interface OperationDoc {
  readonly summary: string
  readonly description?: string
}

const reconcile =
  "A 500 or 503 is indeterminate: retry with the same Idempotency-Key (a recorded write is replayed, never repeated) or reconcile by `reference_id`."

/** Every operation's summary and rules, by operationId (`group.endpoint`); a test keeps it complete. */
export const operationDocs: Readonly<Record<string, OperationDoc>> = {
  "oauth.createToken": {
    summary: "Get an access token (OAuth 2.0 client credentials)",
    description:
      "RFC 6749 4.4: `grant_type=client_credentials` with the client's id and secret, either in the body (form, or the same fields as JSON) or as HTTP Basic (form-urlencoded parts), not both (400 GH1006; beside Basic the body may carry a `client_id` naming the same client). A parameter sent without a value (`client_id=` in a form, an empty string in JSON) is as if omitted (RFC 6749 3.2). A `scope` is 400 GH1006 `invalid_scope`: tokens carry none. Another grant type is 400 GH1007; bad credentials 401 GH1001. Both token endpoints are limited per caller network (by default 20/s, burst 40) and then per client id from that network (5/s, burst 20; an IPv6 caller counted by its /48), before any secret is checked: 429 GH1009 with Retry-After. The token is opaque (`pos_at_…`); send it as `Authorization: Bearer` on every other `/api` request until `expires_at` (Unix seconds).",
  },
  "oauth.revokeToken": {
    summary: "Revoke an access token (RFC 7009)",
    description:
      "`token=…` with the client's credentials as for the token endpoint. Answers 200 whether or not the token was known (another client's token is 400 and stays valid); every API process refuses it as soon as the revocation commits.",
  },
  "users.createUser": {
    summary: "Create a user",
    description:
      "The user starts `processing` and becomes `active` shortly after, when a consumer of the event log activates it; writes for a processing user are 409 LE0001.",
  },
  "users.findUsers": {
    summary: "List users",
    description:
      "Oldest first; `limit` 1..100 (default 20), `cursor` from the previous page's `next_cursor`.",
  },
  "users.getUser": { summary: "Get a user" },
  "users.updateUser": { summary: "Update a user", description: "Its `version` grows with every change." },
  "users.closeUser": {
    summary: "Close a user",
    description:
      "Answers the closed user; closing it again is 409 LE0004. Its points account, if any, closes with it.",
  },
  "users.openPointsAccount": {
    summary: "Open the user's points account",
    description:
      "One account per user: a second is 409 LE1001 (409 LE0001 while the user is processing, LE0004 once closed). Add points opens one too.",
  },
  "users.getPointsAccount": {
    summary: "Get the user's points account",
    description: "404 LE0002 names the user when unknown, the points account when the user has none.",
  },
  "points.addPoints": {
    summary: "Add points",
    description: `Opens the user's points account if it has none. \`reference_id\` is unique per partner among points movements (409 LE0006 for a second one). ${reconcile}`,
  },
  "points.subtractPoints": {
    summary: "Subtract points",
    description: `422 LE2002 when the balance is short, 422 LE2001 when the user has no points account. \`reference_id\` is unique per partner among points movements (409 LE0006). ${reconcile}`,
  },
  "points.getTransaction": { summary: "Get a transaction" },
  "points.findTransactions": {
    summary: "List transactions",
    description:
      "In ledger order: each account's in the order its balance moved, so every `balance_after` follows from the one before. Filter by `user_id` or `reference_id` (an order's debit and refund carry the order's).",
  },
  "orders.createOrder": {
    summary: "Place an order paid in points",
    description: `Idempotency-Key is required (400 IK1003). The total of the items is debited at once (an \`order_debit\` transaction); 422 LE2002 when the balance is short, LE2001 without a points account. The order starts \`pending\`. ${reconcile}`,
  },
  "orders.findOrders": {
    summary: "List orders",
    description: "Oldest first; filter by `user_id`, `status` or `reference_id`.",
  },
  "orders.getOrder": { summary: "Get an order" },
  "orders.cancelOrder": {
    summary: "Cancel an order",
    description:
      "Only while it is `pending` (409 LE3001 otherwise); the debit is refunded (an `order_refund` transaction), into the account even if the user was closed since.",
  },
  "webhookDeliveries.listDeliveries": {
    summary: "List an endpoint's delivery attempts",
    description: "Newest first: one record per attempt, `pending` for one scheduled and not yet made.",
  },
  "webhookDeliveries.replay": {
    summary: "Send events to an endpoint again",
    description:
      'Either `event_ids`, or `since` and/or `until` (the events that occurred in `[since, until)`), not both (400 GH1006), at most 10,000 events. Each is delivered again with its original `webhook-id`; one with an attempt still pending to the endpoint gets no second attempt, that one is made due now. A disabled endpoint is 409 LE0008 and nothing is scheduled: enable it with PATCH `{"enabled": true}` first.',
  },
  "webhookEndpoints.createWebhookEndpoint": {
    summary: "Register a webhook endpoint",
    description:
      "HTTPS to a public address (private and loopback targets, and names that resolve to them, are 400 GH1006; a name that does not resolve yet is accepted). `event_types` absent or empty means every type. A partner has at most 20 endpoints: another is 409 LE0007 until one is deleted. The answer shows the signing secret (`whsec_…`) this once.",
  },
  "webhookEndpoints.listWebhookEndpoints": { summary: "List webhook endpoints" },
  "webhookEndpoints.getWebhookEndpoint": { summary: "Get a webhook endpoint" },
  "webhookEndpoints.updateWebhookEndpoint": {
    summary: "Update a webhook endpoint",
    description: "Change its URL, event types or description, or disable or enable it.",
  },
  "webhookEndpoints.deleteWebhookEndpoint": {
    summary: "Delete a webhook endpoint",
    description: "Answers the endpoint; it is gone, so a repeat is 404 LE0002.",
  },
  "webhookEndpoints.rotateWebhookEndpointSecret": {
    summary: "Rotate a webhook endpoint's signing secret",
    description:
      "The answer shows the new secret this once; the secret it replaces still signs (a second signature) for 24 hours, and one replaced earlier stops at once.",
  },
  "events.listEvents": {
    summary: "List public events",
    description:
      "Every announced change, oldest first: what the webhooks deliver, each with its `id` (the `webhook-id`).",
  },
  "events.getEvent": { summary: "Get a public event" },
  "admin.createPartner": { summary: "Create a partner (admin)" },
  "admin.listPartners": { summary: "List partners (admin)" },
  "admin.getPartner": { summary: "Get a partner (admin)" },
  "admin.createCredential": {
    summary: "Create client credentials for a partner (admin)",
    description: "The answer shows the client secret (`pos_cs_…`) this once; only its hash is kept.",
  },
  "admin.listCredentials": { summary: "List a partner's client credentials (admin)" },
  "admin.rotateCredentialSecret": {
    summary: "Rotate a client secret (admin)",
    description:
      "The answer shows the new secret this once, `created_at` the time it was made (the rotation's; the credential's own creation time stays in its list), and `previous_secret_valid_until`: the previous secret keeps working for `grace_seconds` (default 24 hours; 0 ends it at once, for a secret that leaked). Tokens already issued keep working until they expire; revoke the credential to end them too. A credential keeps one replaced secret: a second rotation within the grace period ends the first replaced secret at once (the credential's list shows `previous_secret_valid_until` while one still works).",
  },
  "admin.revokeCredential": {
    summary: "Revoke client credentials (admin)",
    description: "Its tokens are refused too, by every API process as soon as the revocation commits.",
  },
  "health.live": { summary: "Liveness", description: "200 while the process serves requests." },
  "health.ready": {
    summary: "Readiness",
    description: "200 when the database answers, 503 SV5003 when it does not.",
  },
  "health.metrics": {
    summary: "Metrics (Prometheus text)",
    description:
      "Request counts and latency by route and status, pool usage, idempotency replays, rate-limit rejections, write batches, process CPU and memory.",
  },
}

const ADMIN_OFF = " The admin API answers 404 NN1002 to everything while ADMIN_TOKEN is not set."

// How each security scheme's credentials are obtained.
const schemeDescriptions: Readonly<Record<string, string>> = {
  bearer:
    "An access token from POST /api/oauth/token (OAuth 2.0 client credentials), sent as `Authorization: Bearer pos_at_…` until it expires.",
  adminToken: `The server's ADMIN_TOKEN, sent as \`Authorization: Bearer …\`.${ADMIN_OFF}`,
}

const securitySchemesDescribed = (components: Json): Json => ({
  ...components,
  securitySchemes: Object.fromEntries(
    entriesOf(components.securitySchemes).map(([name, scheme]) => [
      name,
      schemeDescriptions[name] === undefined ? scheme : { ...scheme, description: schemeDescriptions[name] },
    ]),
  ),
})

// The token endpoints read their fields from a form or, the same fields, from JSON (the server accepts both;
// the contract can declare one encoding per payload).
const jsonBodyToo = (operation: Json): Json => {
  const body = operation.requestBody as Json | undefined
  const content = (body?.content ?? {}) as Json
  const form = content["application/x-www-form-urlencoded"]
  if (body === undefined || form === undefined) return operation
  return { ...operation, requestBody: { ...body, content: { ...content, "application/json": form } } }
}

/** What each group of operations (an OpenAPI tag, named after its HttpApiGroup) is for; a test keeps it complete. */
export const tagDocs: Readonly<Record<string, string>> = {
  oauth:
    "OAuth 2.0 client credentials: access tokens for the partner API, and their revocation (RFC 6749, RFC 7009).",
  users:
    "A partner's users: registration (processing, then active), profile updates, closing, and their points accounts.",
  points:
    "Points movements: add and subtract (idempotent, with a reference_id each), and the ledger's transactions.",
  orders:
    "Orders paid in points: placed (the points debited at once), fulfilled, failed or cancelled (refunded).",
  webhookDeliveries:
    "Every attempt to deliver an event to a webhook endpoint, and replays of events to an endpoint.",
  webhookEndpoints:
    "Where the platform sends a partner's events: endpoints, their event types and signing secrets.",
  events: "The partner's public events (what webhooks deliver), to read back or reconcile from.",
  admin:
    "The platform's administration (Bearer ADMIN_TOKEN; off when unset): partners and their client credentials.",
  health: "Liveness, readiness (the database checked) and Prometheus metrics, without credentials.",
}

/**
 * An OpenAPI transform of the whole document: each operation gets its summary and description from
 * operationDocs (the admin ones say the admin API is off without ADMIN_TOKEN), each tag its description from
 * tagDocs, and each security scheme says where its credentials come from; the token endpoints' bodies are
 * documented as form and as JSON. The server is the one that serves the document (`/`, as the paths are
 * written), said explicitly for tools that ask for one.
 */
export const operationsDescribed = (spec: Json): Json => ({
  servers: [{ url: "/", description: "The server this document is served by" }],
  ...mapOperations(spec, (path, operation) => {
    const doc = operationDocs[String(operation.operationId)]
    const decoded = isTokenEndpoint(path) ? jsonBodyToo(operation) : operation
    if (doc === undefined) return decoded
    const description = `${doc.description ?? ""}${path.startsWith("/admin/") ? ADMIN_OFF : ""}`.trim()
    return { ...decoded, summary: doc.summary, ...(description === "" ? {} : { description }) }
  }),
  components: securitySchemesDescribed((spec.components ?? {}) as Json),
  tags: (Array.isArray(spec.tags) ? (spec.tags as ReadonlyArray<Json>) : []).map((tag) => {
    const description = tagDocs[String(tag.name)]
    return description === undefined ? tag : { ...tag, description }
  }),
})

// What the HTTP benchmark asks of the API before and after the load, through its public endpoints only: a
// partner with a credential and a token (admin API, OAuth), active users, and their points balances.
import { setTimeout as sleep } from "node:timers/promises"

/** How long one call may take: the API is idle when these run. */
const TIMEOUT_MS = 30_000

/**
 * Sends a request (a JSON body, or a form for the token endpoint) and returns the parsed answer; any status
 * but `expected` is an error naming the call.
 */
const call = async (
  baseUrl: string,
  method: string,
  path: string,
  options: { readonly token?: string; readonly json?: unknown; readonly form?: URLSearchParams },
  expected: number,
) => {
  const headers: Record<string, string> = {}
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  let body: string | undefined
  if (options.json !== undefined) {
    headers["content-type"] = "application/json"
    body = JSON.stringify(options.json)
  } else if (options.form !== undefined) {
    headers["content-type"] = "application/x-www-form-urlencoded"
    body = options.form.toString()
  }
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  })
  const text = await response.text()
  if (response.status !== expected) {
    throw new Error(`${method} ${path} answered ${response.status}, not ${expected}: ${text.slice(0, 500)}`)
  }
  return JSON.parse(text) as Record<string, unknown>
}

const stringIn = (value: Record<string, unknown>, field: string) => {
  const found = value[field]
  if (typeof found !== "string") throw new Error(`no string ${field} in ${JSON.stringify(value)}`)
  return found
}

/** Creates a partner and a client credential (admin API) and returns a bearer token of it (OAuth). */
export const newPartnerToken = async (baseUrl: string, adminToken: string) => {
  const partner = await call(
    baseUrl,
    "POST",
    "/admin/api/partners",
    { token: adminToken, json: { name: "Bench" } },
    201,
  )
  const partnerId = stringIn(partner, "id")
  const credential = await call(
    baseUrl,
    "POST",
    `/admin/api/partners/${partnerId}/clients`,
    { token: adminToken, json: { name: "bench" } },
    201,
  )
  const token = await call(
    baseUrl,
    "POST",
    "/api/oauth/token",
    {
      form: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: stringIn(credential, "client_id"),
        client_secret: stringIn(credential, "client_secret"),
      }),
    },
    200,
  )
  return { partnerId, token: stringIn(token, "access_token") }
}

/** Registers a user and waits (at most 30 s) until the activation consumer has made it active. */
export const activeUser = async (baseUrl: string, token: string, partnerUserId: string) => {
  const created = await call(
    baseUrl,
    "POST",
    "/api/users",
    { token, json: { partner_user_id: partnerUserId, email: `${partnerUserId}@example.com`, name: "Bench" } },
    201,
  )
  const userId = stringIn(created, "id")
  const deadline = Date.now() + 30_000
  for (;;) {
    const user = await call(baseUrl, "GET", `/api/users/${userId}`, { token }, 200)
    if (user.status === "active") return userId
    if (Date.now() > deadline) throw new Error(`user ${userId} not active after 30 s`)
    await sleep(50)
  }
}

/** The balance of a user's points account; 0 when the user has none yet (no Add points succeeded). */
export const balanceOf = async (baseUrl: string, token: string, userId: string) => {
  const response = await fetch(`${baseUrl}/api/users/${userId}/points-account`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  })
  const text = await response.text()
  if (response.status === 404) return 0
  if (response.status !== 200) throw new Error(`GET points account answered ${response.status}: ${text}`)
  const balance = (JSON.parse(text) as { balance?: unknown }).balance
  if (typeof balance !== "number") throw new Error(`no balance in ${text}`)
  return balance
}

/** Every sample of the API's `/metrics` (Prometheus text), by sample name with its labels. */
export const metricsOf = async (baseUrl: string) => {
  const response = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(TIMEOUT_MS) })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${text}`)
  const samples = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const space = line.lastIndexOf(" ")
    samples.set(line.slice(0, space), Number(line.slice(space + 1)))
  }
  return samples
}

// The load of the HTTP benchmark: autocannon sends Add points requests, each with an Idempotency-Key and a
// reference id of its own, and keeps the books the balance check needs: what every 201 credited, and which
// requests got no answer (cut off by the end of the run, or timed out), to be settled afterwards.
import { setTimeout as sleep } from "node:timers/promises"
import autocannon from "autocannon"
import { uuidv7 as uuidV7 } from "uuidv7"

/** Where the load goes: a server, its path, the bearer token, and the users whose accounts are credited. */
export interface Target {
  readonly baseUrl: string
  readonly path: string
  readonly token: string
  readonly userIds: ReadonlyArray<string>
}

/** A request as sent: whose account it credits, by how much, and its body (to send it again with its key). */
interface Sent {
  readonly userId: string
  readonly amount: number
  readonly referenceId: string
  readonly body: string
}

/** What a run measured and the books it kept. */
export interface LoadResult {
  readonly seconds: number
  /** Answers received, by status. */
  readonly statuses: Map<number, number>
  /** Latency of every answer (any status), in milliseconds, sorted. */
  readonly latencies: Float64Array
  /** Socket errors and timeouts, as autocannon counts them (a timeout is counted in both). */
  readonly connectionErrors: number
  readonly timeouts: number
  /** Points credited by the 201 answers, by user. */
  readonly credited: Map<string, number>
  /** 201 answers whose amount or reference id is not the request's. */
  readonly mismatches: number
  /** Requests sent that got no answer, by Idempotency-Key. */
  readonly unanswered: Map<string, Sent>
}

/** How long a request may take, under load or when sent again, before it counts as timed out. */
const REQUEST_TIMEOUT_MS = 10_000

/** The largest amount credited by one request; each request credits 1 to this, at random. */
const MAX_AMOUNT = 10

const headersFor = (token: string, key: string) => ({
  "content-type": "application/json",
  authorization: `Bearer ${token}`,
  "idempotency-key": key,
})

const bodyOf = (userId: string, amount: number, referenceId: string) =>
  JSON.stringify({ transaction: { user_id: userId, amount, reference_id: referenceId } })

/** The per-connection state autocannon hands to both callbacks: the key of the request in flight. */
interface ConnectionContext {
  key?: string
}

const creditedBy = (body: string, sent: Sent) => {
  try {
    const transaction = JSON.parse(body) as { amount?: unknown; reference_id?: unknown }
    return transaction.amount === sent.amount && transaction.reference_id === sent.referenceId
      ? sent.amount
      : null
  } catch {
    return null
  }
}

/**
 * Runs `connections` connections against the target for `seconds`, one request at a time on each (no
 * pipelining), every request with a fresh Idempotency-Key and reference id and an amount of 1..10 points.
 */
export const runLoad = (target: Target, connections: number, seconds: number) =>
  new Promise<LoadResult>((resolve, reject) => {
    const statuses = new Map<number, number>()
    const credited = new Map<string, number>()
    const unanswered = new Map<string, Sent>()
    const latencies: Array<number> = []
    let mismatches = 0
    const instance = autocannon(
      {
        url: target.baseUrl,
        connections,
        duration: seconds,
        pipelining: 1,
        timeout: REQUEST_TIMEOUT_MS / 1000,
        requests: [
          {
            method: "POST",
            path: target.path,
            // Called for every request just before it is written, with the connection's context: at most one
            // request is in flight per connection, so the context names the one the next answer is for.
            setupRequest: (request, context) => {
              const key = uuidV7()
              const userId = target.userIds[Math.floor(Math.random() * target.userIds.length)] ?? ""
              const amount = 1 + Math.floor(Math.random() * MAX_AMOUNT)
              const referenceId = `bench-${key}`
              const body = bodyOf(userId, amount, referenceId)
              unanswered.set(key, { userId, amount, referenceId, body })
              ;(context as ConnectionContext).key = key
              return { ...request, headers: headersFor(target.token, key), body }
            },
            onResponse: (status, body, context) => {
              statuses.set(status, (statuses.get(status) ?? 0) + 1)
              const key = (context as ConnectionContext).key
              const sent = key === undefined ? undefined : unanswered.get(key)
              if (key === undefined || sent === undefined) return
              unanswered.delete(key)
              if (status !== 201) return
              const amount = creditedBy(body, sent)
              if (amount === null) mismatches++
              else credited.set(sent.userId, (credited.get(sent.userId) ?? 0) + amount)
            },
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error)
        resolve({
          seconds: result.duration,
          statuses,
          latencies: Float64Array.from(latencies).sort(),
          connectionErrors: result.errors,
          timeouts: result.timeouts,
          credited,
          mismatches,
          unanswered,
        })
      },
    )
    instance.on("response", (_client, _status, _bytes, responseTime) => {
      latencies.push(responseTime)
    })
  })

/** Several runs against one target as one: their time, answers and books together, latencies sorted again. */
export const combined = (runs: ReadonlyArray<LoadResult>): LoadResult => {
  const statuses = new Map<number, number>()
  const credited = new Map<string, number>()
  const unanswered = new Map<string, Sent>()
  const latencies = new Float64Array(runs.reduce((total, run) => total + run.latencies.length, 0))
  let at = 0
  for (const run of runs) {
    for (const [status, n] of run.statuses) statuses.set(status, (statuses.get(status) ?? 0) + n)
    for (const [userId, points] of run.credited) credited.set(userId, (credited.get(userId) ?? 0) + points)
    for (const [key, sent] of run.unanswered) unanswered.set(key, sent)
    latencies.set(run.latencies, at)
    at += run.latencies.length
  }
  const sum = (of: (run: LoadResult) => number) => runs.reduce((total, run) => total + of(run), 0)
  return {
    seconds: sum((run) => run.seconds),
    statuses,
    latencies: latencies.sort(),
    connectionErrors: sum((run) => run.connectionErrors),
    timeouts: sum((run) => run.timeouts),
    credited,
    mismatches: sum((run) => run.mismatches),
    unanswered,
  }
}

/** What settling the unanswered requests found. */
export interface Settled {
  readonly statuses: Map<number, number>
  /** Requests still in progress (409 IK1002), or without an answer, after every attempt. */
  readonly unsettled: number
  /** 201 answers whose amount or reference id is not the request's (not credited). */
  readonly mismatches: number
}

/** Sends a request again with its key; null when it got no answer in time. */
const sendAgain = async (target: Target, key: string, sent: Sent) => {
  try {
    const response = await fetch(`${target.baseUrl}${target.path}`, {
      method: "POST",
      headers: headersFor(target.token, key),
      body: sent.body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    return { status: response.status, text: await response.text() }
  } catch {
    return null
  }
}

/**
 * Sends every unanswered request again with its Idempotency-Key, as a partner retries one whose answer it
 * lost: a request that executed answers its recorded response, one that did not executes now. Credits the
 * 201s to `result.credited`, so that the books cover every request that may have changed a balance. A key
 * still in progress (409 IK1002), or a request without an answer, is tried again for at most 30 s.
 */
export const settleUnanswered = async (target: Target, result: LoadResult): Promise<Settled> => {
  const statuses = new Map<number, number>()
  let unsettled = 0
  let mismatches = 0
  for (const [key, sent] of result.unanswered) {
    const deadline = Date.now() + 30_000
    let answer = await sendAgain(target, key, sent)
    while (
      (answer === null || (answer.status === 409 && answer.text.includes("IK1002"))) &&
      Date.now() < deadline
    ) {
      await sleep(100)
      answer = await sendAgain(target, key, sent)
    }
    if (answer === null || (answer.status === 409 && answer.text.includes("IK1002"))) {
      unsettled++
      continue
    }
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    if (answer.status !== 201) continue
    const amount = creditedBy(answer.text, sent)
    if (amount === null) mismatches++
    else result.credited.set(sent.userId, (result.credited.get(sent.userId) ?? 0) + amount)
  }
  return { statuses, unsettled, mismatches }
}

/** The value at fraction `p` of sorted values. */
export const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

/** Statuses as `201 x 12,345, 409 x 3`. */
export const statusesText = (statuses: Map<number, number>) =>
  [...statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status} x ${count.toLocaleString("en")}`)
    .join(", ") || "none"

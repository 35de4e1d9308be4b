import { DatabasePool } from "@points/infrastructure"
import { Effect, Metric, MetricBoundaries, MetricKey, MetricLabel, MetricState, Option } from "effect"
import { processMetricsText } from "./process-metrics.js"

/** Requests answered, by method, route template and status. */
const requestCountKey = MetricKey.counter("http_requests_total", { description: "HTTP requests answered" })

/** Request latency in seconds (until the response is written), by method, route template and status. */
const requestDurationKey = MetricKey.histogram(
  "http_request_duration_seconds",
  MetricBoundaries.exponential({ start: 0.001, factor: 2, count: 14 }),
  "HTTP request latency",
)

/** Requests being handled right now. */
export const requestsInFlight = Metric.gauge("http_requests_in_flight", {
  description: "HTTP requests being handled",
})

/** Idempotent replays answered from a recorded response. */
export const idempotencyReplays = Metric.counter("idempotency_replays_total", {
  description: "Idempotent replays",
})

const directWrites = Metric.counter("direct_write_requests_total", {
  description:
    "Points movements taken by the direct write path, by result: answered there, or handed over to the platform (which answers them as any other request)",
  incremental: true,
})

/** The direct write path's counters (see DirectPointsWritesLive), made once. */
export const directWriteRequests = {
  answered: Metric.tagged(directWrites, "result", "answered"),
  handedOver: Metric.tagged(directWrites, "result", "handed_over"),
}

/** Requests refused by the rate limit. */
export const rateLimitRejections = Metric.counter("rate_limit_rejections_total", {
  description: "429 answers",
})

// The process's PostgreSQL pool, set from the pool itself at each scrape (poolGaugesSet).
const poolConnections = Metric.gauge("db_pool_connections", {
  description: "Open connections of the process's PostgreSQL pool, by state: in_use (checked out) or idle",
})
const poolInUse = poolConnections.pipe(Metric.tagged("state", "in_use"))
const poolIdle = poolConnections.pipe(Metric.tagged("state", "idle"))
const poolMax = Metric.gauge("db_pool_max_connections", {
  description: "The most connections the pool opens (DATABASE_POOL_SIZE)",
})
const poolWaiting = Metric.gauge("db_pool_waiting_requests", {
  description: "Requests for a pooled connection waiting for one to free up (every connection in use)",
})

// Exported from the start, at 0: a scrape then tells "none yet" from "not exported" (a counter appears in
// Effect's registry at its first update).
idempotencyReplays.unsafeUpdate(0, [])
rateLimitRejections.unsafeUpdate(0, [])
directWriteRequests.answered.unsafeUpdate(0, [])
directWriteRequests.handedOver.unsafeUpdate(0, [])

/** The route label of a request no route matched (unknown paths, and bodies refused before routing). */
export const UNMATCHED_ROUTE = "unmatched"

// The request metrics of one method, route template and status, made once. `Metric.taggedWithLabels` would
// build and hash a new metric key on every update (its label array is new each time, so Effect's hook cache
// never hits); a metric made from the full key finds its registry entry once. The combinations are bounded:
// route templates (never concrete paths), methods and statuses.
const requestMetrics = new Map<
  string,
  { readonly count: Metric.Metric.Counter<number>; readonly duration: Metric.Metric.Histogram<number> }
>()

const requestMetricsOf = (method: string, route: string, status: number) => {
  const id = `${method} ${route} ${status}`
  let metrics = requestMetrics.get(id)
  if (metrics === undefined) {
    const labels = [
      MetricLabel.make("method", method),
      MetricLabel.make("route", route),
      MetricLabel.make("status", String(status)),
    ]
    metrics = {
      count: Metric.fromMetricKey(MetricKey.taggedWithLabels(requestCountKey, labels)),
      duration: Metric.fromMetricKey(MetricKey.taggedWithLabels(requestDurationKey, labels)),
    }
    requestMetrics.set(id, metrics)
  }
  return metrics
}

/**
 * Counts one answered request and its latency under its route template (never its concrete path), at once:
 * the request metrics carry no fiber-scoped labels, so they are updated directly rather than as effects.
 */
export const recordRequest = (request: {
  readonly method: string
  readonly route: string
  readonly status: number
  readonly seconds: number
}): void => {
  const { count, duration } = requestMetricsOf(request.method, request.route, request.status)
  count.unsafeUpdate(1, [])
  duration.unsafeUpdate(request.seconds, [])
}

// Label values are escaped as the exposition format asks: backslash, double quote and line feed.
const escapeLabel = (value: string) =>
  value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n")

const labelsOf = (tags: ReadonlyArray<{ readonly key: string; readonly value: string }>, extra = "") => {
  const parts = tags.map((tag) => `${tag.key}="${escapeLabel(tag.value)}"`)
  if (extra !== "") parts.push(extra)
  return parts.length === 0 ? "" : `{${parts.join(",")}}`
}

// Effect's runtime counts its live fibers with a counter that goes down as fibers end: to Prometheus a
// counter only grows (a drop reads as a reset), so it is exported as a gauge. Named, because an Effect counter
// does not say whether it decreases: `incremental: true` makes one ignore negative updates, but most made
// without it only ever grow all the same (`http_requests_total`, `write_batches_total`, ...).
const gaugesCountedAsCounters = new Set(["effect_fiber_active"])

const typeOf = (name: string, state: MetricState.MetricState.Untyped) =>
  MetricState.isCounterState(state)
    ? gaugesCountedAsCounters.has(name)
      ? "gauge"
      : "counter"
    : MetricState.isGaugeState(state)
      ? "gauge"
      : MetricState.isHistogramState(state)
        ? "histogram"
        : undefined

// The pool's figures as they are now, in the gauges, just before the registry is read.
const poolGaugesSet = Effect.flatMap(DatabasePool, (pool) =>
  Effect.map(pool.usage, (usage) => {
    poolInUse.unsafeUpdate(usage.inUse, [])
    poolIdle.unsafeUpdate(usage.idle, [])
    poolMax.unsafeUpdate(usage.max, [])
    poolWaiting.unsafeUpdate(usage.waiting, [])
  }),
)

/**
 * Every metric of this process in the Prometheus text exposition format (version 0.0.4): one `# HELP` and
 * `# TYPE` per metric family, its samples together, then the process's own figures (processMetricsText).
 * The database pool's gauges are read from the pool at each call. Frequencies and summaries are not exported.
 */
export const prometheusText = Effect.zipRight(poolGaugesSet, Metric.snapshot).pipe(
  Effect.map((pairs) => {
    const families = new Map<string, { help: string; type: string; samples: Array<string> }>()
    for (const pair of pairs) {
      const name = pair.metricKey.name
      const state = pair.metricState
      const type = typeOf(name, state)
      if (type === undefined) continue
      const family = families.get(name) ?? {
        help: Option.getOrElse(pair.metricKey.description, () => name),
        type,
        samples: [] as Array<string>,
      }
      families.set(name, family)
      const tags = pair.metricKey.tags
      if (MetricState.isCounterState(state))
        family.samples.push(`${name}${labelsOf(tags)} ${Number(state.count)}`)
      else if (MetricState.isGaugeState(state))
        family.samples.push(`${name}${labelsOf(tags)} ${Number(state.value)}`)
      else if (MetricState.isHistogramState(state)) {
        // Effect's buckets are cumulative and end with +Inf, as Prometheus expects.
        for (const [bound, count] of state.buckets) {
          const le = Number.isFinite(bound) ? String(bound) : "+Inf"
          family.samples.push(`${name}_bucket${labelsOf(tags, `le="${le}"`)} ${count}`)
        }
        family.samples.push(
          `${name}_sum${labelsOf(tags)} ${state.sum}`,
          `${name}_count${labelsOf(tags)} ${state.count}`,
        )
      }
    }
    const lines: Array<string> = []
    for (const [name, family] of families) {
      lines.push(`# HELP ${name} ${family.help.replaceAll("\\", "\\\\").replaceAll("\n", "\\n")}`)
      lines.push(`# TYPE ${name} ${family.type}`, ...family.samples)
    }
    return `${lines.map((line) => `${line}\n`).join("")}${processMetricsText()}`
  }),
)
